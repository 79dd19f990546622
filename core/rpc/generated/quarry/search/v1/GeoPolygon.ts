// Original file: proto/search/v1/core.proto

import type { GeoRing as _quarry_search_v1_GeoRing, GeoRing__Output as _quarry_search_v1_GeoRing__Output } from '../../../quarry/search/v1/GeoRing.js';

export interface GeoPolygon {
  'exterior'?: (_quarry_search_v1_GeoRing | null);
  'interiors'?: (_quarry_search_v1_GeoRing)[];
}

export interface GeoPolygon__Output {
  'exterior': (_quarry_search_v1_GeoRing__Output | null);
  'interiors': (_quarry_search_v1_GeoRing__Output)[];
}
