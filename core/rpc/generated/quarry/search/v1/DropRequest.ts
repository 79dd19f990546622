// Original file: proto/search/v1/core.proto


export interface DropRequest {
  'dataset_id'?: (string);
}

export interface DropRequest__Output {
  'dataset_id': (string);
}
