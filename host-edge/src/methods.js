// The store methods a Durable Object serves over RPC (`MnemeStore.call`): the JS API's
// (host-node/js/api.js), minus what needs a live object on the caller's side.
export const METHODS = [
  "append", "appendTurn", "providerContext", "branches", "usage", "fork", "importSession", "exportSession", "gc", "archive", "archived", "restore", "tombstone", "load", "context", "list", "search", "check",
  "subagents", "remove", "repair", "hold", "release", "reopen", "setRedaction", "planCompaction", "summarizeOffline", "applyCompaction",
  "recordCompactionFailure", "memoryFlushGate", "recordMemoryFlush", "extractionGate", "recordExtraction", "resetGate",
  "dreamGate", "dreamAcquire", "dreamRelease",
  "memoryAdd", "memoryAddMany", "memoryUpdate", "memorySupersede", "memoryForget", "memoryLink", "memoryList", "memoryShow",
  "memoryRecall", "memoryLoad", "memoryReindex", "memoryUsed", "setEmbeddings", "planExtraction", "applyExtraction", "recordExtractionFailure",
  "planConsolidation", "applyConsolidation", "rollbackConsolidation", "consolidations", "instructions", "writeFile", "readFile",
  "removeFile", "resolve", "resetKey", "updateKey", "removeKey", "importOpenclawKeys", "exportOpenclawKeys", "rolloverGate", "rollover", "rebuildIndex", "crabLatest", "crabStart", "crabSession", "crabSetTitle", "crabAddUptime", "key", "keys", "indexReport", "keyOf", "parseKey",
];
