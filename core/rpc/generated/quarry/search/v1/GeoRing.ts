// Original file: proto/search/v1/core.proto

import type { GeoPoint as _quarry_search_v1_GeoPoint, GeoPoint__Output as _quarry_search_v1_GeoPoint__Output } from '../../../quarry/search/v1/GeoPoint.js';

export interface GeoRing {
  'points'?: (_quarry_search_v1_GeoPoint)[];
}

export interface GeoRing__Output {
  'points': (_quarry_search_v1_GeoPoint__Output)[];
}
