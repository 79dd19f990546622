// Original file: proto/search/v1/core.proto

import type { FieldCondition as _quarry_search_v1_FieldCondition, FieldCondition__Output as _quarry_search_v1_FieldCondition__Output } from '../../../quarry/search/v1/FieldCondition.js';
import type { HasIdCondition as _quarry_search_v1_HasIdCondition, HasIdCondition__Output as _quarry_search_v1_HasIdCondition__Output } from '../../../quarry/search/v1/HasIdCondition.js';

export interface Condition {
  'field'?: (_quarry_search_v1_FieldCondition | null);
  'has_id'?: (_quarry_search_v1_HasIdCondition | null);
  'kind'?: "field"|"has_id";
}

export interface Condition__Output {
  'field'?: (_quarry_search_v1_FieldCondition__Output | null);
  'has_id'?: (_quarry_search_v1_HasIdCondition__Output | null);
  'kind'?: "field"|"has_id";
}
