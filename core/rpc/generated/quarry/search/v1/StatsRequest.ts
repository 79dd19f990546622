// Original file: proto/search/v1/core.proto


export interface StatsRequest {
  'dataset_id'?: (string);
}

export interface StatsRequest__Output {
  'dataset_id': (string);
}
