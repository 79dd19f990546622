// Original file: proto/search/v1/core.proto


export interface GeoPoint {
  'lat'?: (number | string);
  'lon'?: (number | string);
}

export interface GeoPoint__Output {
  'lat': (number);
  'lon': (number);
}
