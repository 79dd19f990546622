// Original file: proto/search/v1/core.proto

import type { GeoPoint as _quarry_search_v1_GeoPoint, GeoPoint__Output as _quarry_search_v1_GeoPoint__Output } from '../../../quarry/search/v1/GeoPoint.js';

export interface GeoRadius {
  'center'?: (_quarry_search_v1_GeoPoint | null);
  /**
   * Meters.
   */
  'radius'?: (number | string);
}

export interface GeoRadius__Output {
  'center': (_quarry_search_v1_GeoPoint__Output | null);
  /**
   * Meters.
   */
  'radius': (number);
}
