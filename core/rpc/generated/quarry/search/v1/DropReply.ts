// Original file: proto/search/v1/core.proto


export interface DropReply {
}

export interface DropReply__Output {
}
