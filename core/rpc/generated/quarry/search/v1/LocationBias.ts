// Original file: proto/search/v1/core.proto

import type { GeoPoint as _quarry_search_v1_GeoPoint, GeoPoint__Output as _quarry_search_v1_GeoPoint__Output } from '../../../quarry/search/v1/GeoPoint.js';

/**
 * (1 - bias) x normalised score + bias x (1 - normalised distance to location).
 */
export interface LocationBias {
  'location'?: (_quarry_search_v1_GeoPoint | null);
  /**
   * 0..1.
   */
  'bias'?: (number | string);
}

/**
 * (1 - bias) x normalised score + bias x (1 - normalised distance to location).
 */
export interface LocationBias__Output {
  'location': (_quarry_search_v1_GeoPoint__Output | null);
  /**
   * 0..1.
   */
  'bias': (number);
}
