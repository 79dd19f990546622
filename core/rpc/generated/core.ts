import type * as grpc from '@grpc/grpc-js';
import type { MessageTypeDefinition } from '@grpc/proto-loader';

import type { ApplyReply as _quarry_search_v1_ApplyReply, ApplyReply__Output as _quarry_search_v1_ApplyReply__Output } from './quarry/search/v1/ApplyReply.js';
import type { ApplyRequest as _quarry_search_v1_ApplyRequest, ApplyRequest__Output as _quarry_search_v1_ApplyRequest__Output } from './quarry/search/v1/ApplyRequest.js';
import type { Autocomplete as _quarry_search_v1_Autocomplete, Autocomplete__Output as _quarry_search_v1_Autocomplete__Output } from './quarry/search/v1/Autocomplete.js';
import type { BoostPhrase as _quarry_search_v1_BoostPhrase, BoostPhrase__Output as _quarry_search_v1_BoostPhrase__Output } from './quarry/search/v1/BoostPhrase.js';
import type { Bound as _quarry_search_v1_Bound, Bound__Output as _quarry_search_v1_Bound__Output } from './quarry/search/v1/Bound.js';
import type { Condition as _quarry_search_v1_Condition, Condition__Output as _quarry_search_v1_Condition__Output } from './quarry/search/v1/Condition.js';
import type { CoreClient as _quarry_search_v1_CoreClient, CoreDefinition as _quarry_search_v1_CoreDefinition } from './quarry/search/v1/Core.js';
import type { CountOnly as _quarry_search_v1_CountOnly, CountOnly__Output as _quarry_search_v1_CountOnly__Output } from './quarry/search/v1/CountOnly.js';
import type { DropReply as _quarry_search_v1_DropReply, DropReply__Output as _quarry_search_v1_DropReply__Output } from './quarry/search/v1/DropReply.js';
import type { DropRequest as _quarry_search_v1_DropRequest, DropRequest__Output as _quarry_search_v1_DropRequest__Output } from './quarry/search/v1/DropRequest.js';
import type { FieldCondition as _quarry_search_v1_FieldCondition, FieldCondition__Output as _quarry_search_v1_FieldCondition__Output } from './quarry/search/v1/FieldCondition.js';
import type { FieldSort as _quarry_search_v1_FieldSort, FieldSort__Output as _quarry_search_v1_FieldSort__Output } from './quarry/search/v1/FieldSort.js';
import type { Filter as _quarry_search_v1_Filter, Filter__Output as _quarry_search_v1_Filter__Output } from './quarry/search/v1/Filter.js';
import type { GeoBoundingBox as _quarry_search_v1_GeoBoundingBox, GeoBoundingBox__Output as _quarry_search_v1_GeoBoundingBox__Output } from './quarry/search/v1/GeoBoundingBox.js';
import type { GeoPoint as _quarry_search_v1_GeoPoint, GeoPoint__Output as _quarry_search_v1_GeoPoint__Output } from './quarry/search/v1/GeoPoint.js';
import type { GeoPolygon as _quarry_search_v1_GeoPolygon, GeoPolygon__Output as _quarry_search_v1_GeoPolygon__Output } from './quarry/search/v1/GeoPolygon.js';
import type { GeoRadius as _quarry_search_v1_GeoRadius, GeoRadius__Output as _quarry_search_v1_GeoRadius__Output } from './quarry/search/v1/GeoRadius.js';
import type { GeoRing as _quarry_search_v1_GeoRing, GeoRing__Output as _quarry_search_v1_GeoRing__Output } from './quarry/search/v1/GeoRing.js';
import type { GroupBy as _quarry_search_v1_GroupBy, GroupBy__Output as _quarry_search_v1_GroupBy__Output } from './quarry/search/v1/GroupBy.js';
import type { GroupHits as _quarry_search_v1_GroupHits, GroupHits__Output as _quarry_search_v1_GroupHits__Output } from './quarry/search/v1/GroupHits.js';
import type { GroupRef as _quarry_search_v1_GroupRef, GroupRef__Output as _quarry_search_v1_GroupRef__Output } from './quarry/search/v1/GroupRef.js';
import type { HasIdCondition as _quarry_search_v1_HasIdCondition, HasIdCondition__Output as _quarry_search_v1_HasIdCondition__Output } from './quarry/search/v1/HasIdCondition.js';
import type { HealthReply as _quarry_search_v1_HealthReply, HealthReply__Output as _quarry_search_v1_HealthReply__Output } from './quarry/search/v1/HealthReply.js';
import type { HealthRequest as _quarry_search_v1_HealthRequest, HealthRequest__Output as _quarry_search_v1_HealthRequest__Output } from './quarry/search/v1/HealthRequest.js';
import type { LocationBias as _quarry_search_v1_LocationBias, LocationBias__Output as _quarry_search_v1_LocationBias__Output } from './quarry/search/v1/LocationBias.js';
import type { Range as _quarry_search_v1_Range, Range__Output as _quarry_search_v1_Range__Output } from './quarry/search/v1/Range.js';
import type { Recommend as _quarry_search_v1_Recommend, Recommend__Output as _quarry_search_v1_Recommend__Output } from './quarry/search/v1/Recommend.js';
import type { Rerank as _quarry_search_v1_Rerank, Rerank__Output as _quarry_search_v1_Rerank__Output } from './quarry/search/v1/Rerank.js';
import type { ScoredChunk as _quarry_search_v1_ScoredChunk, ScoredChunk__Output as _quarry_search_v1_ScoredChunk__Output } from './quarry/search/v1/ScoredChunk.js';
import type { ScoringOptions as _quarry_search_v1_ScoringOptions, ScoringOptions__Output as _quarry_search_v1_ScoringOptions__Output } from './quarry/search/v1/ScoringOptions.js';
import type { ScrollOptions as _quarry_search_v1_ScrollOptions, ScrollOptions__Output as _quarry_search_v1_ScrollOptions__Output } from './quarry/search/v1/ScrollOptions.js';
import type { SearchReply as _quarry_search_v1_SearchReply, SearchReply__Output as _quarry_search_v1_SearchReply__Output } from './quarry/search/v1/SearchReply.js';
import type { SearchRequest as _quarry_search_v1_SearchRequest, SearchRequest__Output as _quarry_search_v1_SearchRequest__Output } from './quarry/search/v1/SearchRequest.js';
import type { SortOptions as _quarry_search_v1_SortOptions, SortOptions__Output as _quarry_search_v1_SortOptions__Output } from './quarry/search/v1/SortOptions.js';
import type { StatsReply as _quarry_search_v1_StatsReply, StatsReply__Output as _quarry_search_v1_StatsReply__Output } from './quarry/search/v1/StatsReply.js';
import type { StatsRequest as _quarry_search_v1_StatsRequest, StatsRequest__Output as _quarry_search_v1_StatsRequest__Output } from './quarry/search/v1/StatsRequest.js';
import type { TypoOptions as _quarry_search_v1_TypoOptions, TypoOptions__Output as _quarry_search_v1_TypoOptions__Output } from './quarry/search/v1/TypoOptions.js';
import type { Value as _quarry_search_v1_Value, Value__Output as _quarry_search_v1_Value__Output } from './quarry/search/v1/Value.js';
import type { WeightedQuery as _quarry_search_v1_WeightedQuery, WeightedQuery__Output as _quarry_search_v1_WeightedQuery__Output } from './quarry/search/v1/WeightedQuery.js';

type SubtypeConstructor<Constructor extends new (...args: any) => any, Subtype> = {
  new(...args: ConstructorParameters<Constructor>): Subtype;
};

export interface ProtoGrpcType {
  quarry: {
    search: {
      v1: {
        ApplyReply: MessageTypeDefinition<_quarry_search_v1_ApplyReply, _quarry_search_v1_ApplyReply__Output>
        ApplyRequest: MessageTypeDefinition<_quarry_search_v1_ApplyRequest, _quarry_search_v1_ApplyRequest__Output>
        Autocomplete: MessageTypeDefinition<_quarry_search_v1_Autocomplete, _quarry_search_v1_Autocomplete__Output>
        BoostPhrase: MessageTypeDefinition<_quarry_search_v1_BoostPhrase, _quarry_search_v1_BoostPhrase__Output>
        Bound: MessageTypeDefinition<_quarry_search_v1_Bound, _quarry_search_v1_Bound__Output>
        Condition: MessageTypeDefinition<_quarry_search_v1_Condition, _quarry_search_v1_Condition__Output>
        /**
         * The search core: shard placement, scatter/gather, indexing and search.
         */
        Core: SubtypeConstructor<typeof grpc.Client, _quarry_search_v1_CoreClient> & { service: _quarry_search_v1_CoreDefinition }
        CountOnly: MessageTypeDefinition<_quarry_search_v1_CountOnly, _quarry_search_v1_CountOnly__Output>
        DropReply: MessageTypeDefinition<_quarry_search_v1_DropReply, _quarry_search_v1_DropReply__Output>
        DropRequest: MessageTypeDefinition<_quarry_search_v1_DropRequest, _quarry_search_v1_DropRequest__Output>
        FieldCondition: MessageTypeDefinition<_quarry_search_v1_FieldCondition, _quarry_search_v1_FieldCondition__Output>
        FieldSort: MessageTypeDefinition<_quarry_search_v1_FieldSort, _quarry_search_v1_FieldSort__Output>
        Filter: MessageTypeDefinition<_quarry_search_v1_Filter, _quarry_search_v1_Filter__Output>
        GeoBoundingBox: MessageTypeDefinition<_quarry_search_v1_GeoBoundingBox, _quarry_search_v1_GeoBoundingBox__Output>
        GeoPoint: MessageTypeDefinition<_quarry_search_v1_GeoPoint, _quarry_search_v1_GeoPoint__Output>
        GeoPolygon: MessageTypeDefinition<_quarry_search_v1_GeoPolygon, _quarry_search_v1_GeoPolygon__Output>
        GeoRadius: MessageTypeDefinition<_quarry_search_v1_GeoRadius, _quarry_search_v1_GeoRadius__Output>
        GeoRing: MessageTypeDefinition<_quarry_search_v1_GeoRing, _quarry_search_v1_GeoRing__Output>
        GroupBy: MessageTypeDefinition<_quarry_search_v1_GroupBy, _quarry_search_v1_GroupBy__Output>
        GroupHits: MessageTypeDefinition<_quarry_search_v1_GroupHits, _quarry_search_v1_GroupHits__Output>
        GroupRef: MessageTypeDefinition<_quarry_search_v1_GroupRef, _quarry_search_v1_GroupRef__Output>
        HasIdCondition: MessageTypeDefinition<_quarry_search_v1_HasIdCondition, _quarry_search_v1_HasIdCondition__Output>
        HealthReply: MessageTypeDefinition<_quarry_search_v1_HealthReply, _quarry_search_v1_HealthReply__Output>
        HealthRequest: MessageTypeDefinition<_quarry_search_v1_HealthRequest, _quarry_search_v1_HealthRequest__Output>
        LocationBias: MessageTypeDefinition<_quarry_search_v1_LocationBias, _quarry_search_v1_LocationBias__Output>
        Range: MessageTypeDefinition<_quarry_search_v1_Range, _quarry_search_v1_Range__Output>
        Recommend: MessageTypeDefinition<_quarry_search_v1_Recommend, _quarry_search_v1_Recommend__Output>
        Rerank: MessageTypeDefinition<_quarry_search_v1_Rerank, _quarry_search_v1_Rerank__Output>
        ScoredChunk: MessageTypeDefinition<_quarry_search_v1_ScoredChunk, _quarry_search_v1_ScoredChunk__Output>
        ScoringOptions: MessageTypeDefinition<_quarry_search_v1_ScoringOptions, _quarry_search_v1_ScoringOptions__Output>
        ScrollOptions: MessageTypeDefinition<_quarry_search_v1_ScrollOptions, _quarry_search_v1_ScrollOptions__Output>
        SearchReply: MessageTypeDefinition<_quarry_search_v1_SearchReply, _quarry_search_v1_SearchReply__Output>
        SearchRequest: MessageTypeDefinition<_quarry_search_v1_SearchRequest, _quarry_search_v1_SearchRequest__Output>
        SortOptions: MessageTypeDefinition<_quarry_search_v1_SortOptions, _quarry_search_v1_SortOptions__Output>
        StatsReply: MessageTypeDefinition<_quarry_search_v1_StatsReply, _quarry_search_v1_StatsReply__Output>
        StatsRequest: MessageTypeDefinition<_quarry_search_v1_StatsRequest, _quarry_search_v1_StatsRequest__Output>
        TypoOptions: MessageTypeDefinition<_quarry_search_v1_TypoOptions, _quarry_search_v1_TypoOptions__Output>
        Value: MessageTypeDefinition<_quarry_search_v1_Value, _quarry_search_v1_Value__Output>
        WeightedQuery: MessageTypeDefinition<_quarry_search_v1_WeightedQuery, _quarry_search_v1_WeightedQuery__Output>
      }
    }
  }
}

