// Original file: proto/search/v1/core.proto

import type { Value as _quarry_search_v1_Value, Value__Output as _quarry_search_v1_Value__Output } from '../../../quarry/search/v1/Value.js';
import type { Range as _quarry_search_v1_Range, Range__Output as _quarry_search_v1_Range__Output } from '../../../quarry/search/v1/Range.js';
import type { GeoRadius as _quarry_search_v1_GeoRadius, GeoRadius__Output as _quarry_search_v1_GeoRadius__Output } from '../../../quarry/search/v1/GeoRadius.js';
import type { GeoBoundingBox as _quarry_search_v1_GeoBoundingBox, GeoBoundingBox__Output as _quarry_search_v1_GeoBoundingBox__Output } from '../../../quarry/search/v1/GeoBoundingBox.js';
import type { GeoPolygon as _quarry_search_v1_GeoPolygon, GeoPolygon__Output as _quarry_search_v1_GeoPolygon__Output } from '../../../quarry/search/v1/GeoPolygon.js';

/**
 * A condition on one field. Exactly one predicate is set (the facade enforces it).
 */
export interface FieldCondition {
  /**
   * tag_set, link, num_value, time_stamp, location, tracking_id, group_ids, group_tracking_ids,
   * or metadata.<key>[.<key>...].
   */
  'field'?: (string);
  /**
   * Some value of the field contains one of these as a substring (text) or equals it (number).
   */
  'match'?: (_quarry_search_v1_Value)[];
  /**
   * Some value of the field equals one of these.
   */
  'match_any'?: (_quarry_search_v1_Value)[];
  /**
   * The field has every one of these values.
   */
  'match_all'?: (_quarry_search_v1_Value)[];
  /**
   * Numeric bounds.
   */
  'range'?: (_quarry_search_v1_Range | null);
  /**
   * Timestamp bounds (epoch milliseconds).
   */
  'date_range'?: (_quarry_search_v1_Range | null);
  /**
   * Equality with a boolean (metadata booleans).
   */
  'boolean'?: (_quarry_search_v1_Value | null);
  'geo_radius'?: (_quarry_search_v1_GeoRadius | null);
  'geo_bounding_box'?: (_quarry_search_v1_GeoBoundingBox | null);
  'geo_polygon'?: (_quarry_search_v1_GeoPolygon | null);
  /**
   * Only with field "content": the last word of each value also matches every indexed word it
   * begins (autocomplete's word still being typed). Off, every word must occur as written.
   */
  'prefix_last_word'?: (boolean);
}

/**
 * A condition on one field. Exactly one predicate is set (the facade enforces it).
 */
export interface FieldCondition__Output {
  /**
   * tag_set, link, num_value, time_stamp, location, tracking_id, group_ids, group_tracking_ids,
   * or metadata.<key>[.<key>...].
   */
  'field': (string);
  /**
   * Some value of the field contains one of these as a substring (text) or equals it (number).
   */
  'match': (_quarry_search_v1_Value__Output)[];
  /**
   * Some value of the field equals one of these.
   */
  'match_any': (_quarry_search_v1_Value__Output)[];
  /**
   * The field has every one of these values.
   */
  'match_all': (_quarry_search_v1_Value__Output)[];
  /**
   * Numeric bounds.
   */
  'range': (_quarry_search_v1_Range__Output | null);
  /**
   * Timestamp bounds (epoch milliseconds).
   */
  'date_range': (_quarry_search_v1_Range__Output | null);
  /**
   * Equality with a boolean (metadata booleans).
   */
  'boolean': (_quarry_search_v1_Value__Output | null);
  'geo_radius': (_quarry_search_v1_GeoRadius__Output | null);
  'geo_bounding_box': (_quarry_search_v1_GeoBoundingBox__Output | null);
  'geo_polygon': (_quarry_search_v1_GeoPolygon__Output | null);
  /**
   * Only with field "content": the last word of each value also matches every indexed word it
   * begins (autocomplete's word still being typed). Off, every word must occur as written.
   */
  'prefix_last_word': (boolean);
}
