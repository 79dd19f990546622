// Original file: proto/search/v1/core.proto


/**
 * Health takes no arguments.
 */
export interface HealthRequest {
}

/**
 * Health takes no arguments.
 */
export interface HealthRequest__Output {
}
