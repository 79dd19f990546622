/**
 * RAG and recommendation analytics reports: `POST /api/analytics/rag` and
 * `POST /api/analytics/recommendations`, one report per body `type` (admin or owner of the
 * dataset's organization, as in the reference). The SQL of every report is in `store/reports/`.
 */
import { notFound } from '../../core/domain/errors.js';
import { Role } from '../../core/domain/tenancy.js';
import type { ReportSql } from '../../store/reports/report-sql.js';
import { ragDetails, ragQueries } from '../../store/reports/rag-events.js';
import {
  chatAverageRating,
  chatConversionRate,
  chatRevenue,
  followupQueries,
  messagesPerUser,
  popularChats,
  ragCtrOverTime,
  ragEventFunnel,
  ragQueryRatings,
  ragUsage,
  ragUsageGraph,
} from '../../store/reports/rag-reports.js';
import { eventsForTopic, topicDetails, topicQueries, topicsOverTime } from '../../store/reports/rag-topics.js';
import {
  lowConfidenceRecommendations,
  recommendationConversionRate,
  recommendationDetails,
  recommendationEventFunnel,
  recommendationQueries,
  recommendationsCtrRate,
  recommendationsPerUser,
  recommendationUsageGraph,
} from '../../store/reports/recommendation-reports.js';
import { datasetAccess } from '../access.js';
import type { Services } from '../context.js';
import { ragQueryEvent } from '../present/rag-query-event.js';
import { eventData } from '../present/user-event.js';
import { recommendationEvent } from '../present/recommendation-event.js';
import { parseRagReport, type RagReportRequest } from '../schemas/rag-analytics.js';
import { parseRecommendationReport, type RecommendationReportRequest } from '../schemas/recommendation-analytics.js';
import type { QuarryRouter } from './router.js';

/** The answer of one RAG report. */
async function ragReport(sql: ReportSql, datasetId: string, req: RagReportRequest): Promise<unknown> {
  switch (req.type) {
    case 'rag_queries':
      return { queries: (await ragQueries(sql, datasetId, req)).map(ragQueryEvent) };
    case 'rag_usage':
      return ragUsage(sql, datasetId, req.filter);
    case 'rag_usage_graph':
      return ragUsageGraph(sql, datasetId, req);
    case 'rag_query_details': {
      const found = await ragDetails(sql, datasetId, req.requestId);
      if (!found) throw notFound(`RAG query ${req.requestId} not found in this dataset`);
      return ragQueryEvent(found);
    }
    case 'rag_query_ratings':
      return ragQueryRatings(sql, datasetId, req.filter);
    case 'followup_queries':
      return followupQueries(sql, datasetId, req);
    case 'topic_queries':
      return topicQueries(sql, datasetId, req);
    case 'topic_details': {
      const found = await topicDetails(sql, datasetId, req.topicId);
      if (!found) throw notFound(`topic ${req.topicId} not found in this dataset`);
      return { topic: found.topic, messages: found.messages.map(ragQueryEvent) };
    }
    case 'topics_over_time':
      return topicsOverTime(sql, datasetId, req);
    case 'ctr_metrics_over_time':
      return ragCtrOverTime(sql, datasetId, req);
    case 'messages_per_user':
      return messagesPerUser(sql, datasetId, req);
    case 'chat_average_rating':
      return chatAverageRating(sql, datasetId, req);
    case 'chat_conversion_rate':
      return chatConversionRate(sql, datasetId, req);
    case 'event_funnel':
      return ragEventFunnel(sql, datasetId, req.filter);
    case 'events_for_topic': {
      const found = await eventsForTopic(sql, datasetId, req.topicId);
      if (!found) throw notFound(`topic ${req.topicId} not found in this dataset`);
      return { events: found.map(eventData) };
    }
    case 'chat_revenue':
      return chatRevenue(sql, datasetId, req);
    case 'popular_chats':
      return popularChats(sql, datasetId, req);
  }
}

/** The answer of one recommendation report. */
async function recommendationReport(sql: ReportSql, datasetId: string, req: RecommendationReportRequest): Promise<unknown> {
  switch (req.type) {
    case 'low_confidence_recommendations':
      return { queries: (await lowConfidenceRecommendations(sql, datasetId, req)).map(recommendationEvent) };
    case 'recommendation_queries':
      return { queries: (await recommendationQueries(sql, datasetId, req)).map(recommendationEvent) };
    case 'query_details': {
      const found = await recommendationDetails(sql, datasetId, req.requestId);
      if (!found) throw notFound(`recommendation ${req.requestId} not found in this dataset`);
      return recommendationEvent(found);
    }
    case 'recommendation_usage_graph':
      return recommendationUsageGraph(sql, datasetId, req);
    case 'recommendations_per_user':
      return recommendationsPerUser(sql, datasetId, req);
    case 'recommendations_ctr_rate':
      return recommendationsCtrRate(sql, datasetId, req);
    case 'recommendation_conversion_rate':
      return recommendationConversionRate(sql, datasetId, req);
    case 'event_funnel':
      return recommendationEventFunnel(sql, datasetId, req.filter);
  }
}

/** Registers the RAG and recommendation analytics reports. */
export function ragAnalyticsRoutes(router: QuarryRouter, services: Services): void {
  router.post('/api/analytics/rag', async (ctx) => {
    const { dataset } = await datasetAccess(ctx, services, Role.Admin);
    const req = parseRagReport(ctx.state.body);
    ctx.body = await ragReport(services.store.reports, dataset.id, req);
  });

  router.post('/api/analytics/recommendations', async (ctx) => {
    const { dataset } = await datasetAccess(ctx, services, Role.Admin);
    const req = parseRecommendationReport(ctx.state.body);
    ctx.body = await recommendationReport(services.store.reports, dataset.id, req);
  });
}
