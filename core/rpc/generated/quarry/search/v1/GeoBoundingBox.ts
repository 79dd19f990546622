// Original file: proto/search/v1/core.proto

import type { GeoPoint as _quarry_search_v1_GeoPoint, GeoPoint__Output as _quarry_search_v1_GeoPoint__Output } from '../../../quarry/search/v1/GeoPoint.js';

export interface GeoBoundingBox {
  'top_left'?: (_quarry_search_v1_GeoPoint | null);
  'bottom_right'?: (_quarry_search_v1_GeoPoint | null);
}

export interface GeoBoundingBox__Output {
  'top_left': (_quarry_search_v1_GeoPoint__Output | null);
  'bottom_right': (_quarry_search_v1_GeoPoint__Output | null);
}
