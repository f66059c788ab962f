-- The seed Nsight Systems export for fuzz_nsys_sqlite: the tables and columns of
-- `nsys export --type sqlite` that the importer reads (as in tests/profiler/tst_importers.cpp).
CREATE TABLE StringIds (id INTEGER NOT NULL PRIMARY KEY, value TEXT NOT NULL);
INSERT INTO StringIds VALUES (1, 'cudaLaunchKernel'), (2, 'ampere_bf16_s16816gemm'),
  (3, 'ncclDevKernel_ReduceScatter_Sum_bf16_RING_LL'), (4, 'gemm'), (5, 'ncclKernel');
CREATE TABLE CUPTI_ACTIVITY_KIND_KERNEL (start INTEGER NOT NULL, end INTEGER NOT NULL,
  deviceId INTEGER NOT NULL, contextId INTEGER NOT NULL, streamId INTEGER NOT NULL,
  correlationId INTEGER, globalPid INTEGER, demangledName INTEGER NOT NULL, shortName INTEGER NOT NULL,
  gridX INTEGER NOT NULL DEFAULT 1, gridY INTEGER NOT NULL DEFAULT 1, gridZ INTEGER NOT NULL DEFAULT 1,
  blockX INTEGER NOT NULL DEFAULT 1, blockY INTEGER NOT NULL DEFAULT 1, blockZ INTEGER NOT NULL DEFAULT 1,
  registersPerThread INTEGER NOT NULL DEFAULT 0);
INSERT INTO CUPTI_ACTIVITY_KIND_KERNEL (start, end, deviceId, contextId, streamId, correlationId,
  globalPid, demangledName, shortName) VALUES (2000, 3000, 0, 1, 7, 11, 0, 2, 4), (3100, 3600, 0, 1, 13, 12, 0, 3, 5);
CREATE TABLE CUPTI_ACTIVITY_KIND_RUNTIME (start INTEGER NOT NULL, end INTEGER NOT NULL,
  eventClass INTEGER NOT NULL DEFAULT 0, globalTid INTEGER, correlationId INTEGER,
  nameId INTEGER NOT NULL, returnValue INTEGER NOT NULL DEFAULT 0, callchainId INTEGER);
INSERT INTO CUPTI_ACTIVITY_KIND_RUNTIME (start, end, globalTid, correlationId, nameId) VALUES
  (1500, 1600, 281479271677953, 11, 1), (1700, 1750, 281479271677953, 12, 1);
CREATE TABLE CUPTI_ACTIVITY_KIND_MEMCPY (start INTEGER NOT NULL, end INTEGER NOT NULL,
  deviceId INTEGER NOT NULL, contextId INTEGER NOT NULL, streamId INTEGER NOT NULL,
  correlationId INTEGER, globalPid INTEGER, bytes INTEGER NOT NULL, copyKind INTEGER NOT NULL,
  deprecatedSrcId INTEGER, srcKind INTEGER, dstKind INTEGER);
INSERT INTO CUPTI_ACTIVITY_KIND_MEMCPY (start, end, deviceId, contextId, streamId, correlationId,
  bytes, copyKind) VALUES (1000, 1200, 0, 1, 7, 10, 65536, 1);
CREATE TABLE CUPTI_ACTIVITY_KIND_MEMSET (start INTEGER NOT NULL, end INTEGER NOT NULL,
  deviceId INTEGER NOT NULL, contextId INTEGER NOT NULL, streamId INTEGER NOT NULL,
  correlationId INTEGER, globalPid INTEGER, value INTEGER NOT NULL, bytes INTEGER NOT NULL, memKind INTEGER);
INSERT INTO CUPTI_ACTIVITY_KIND_MEMSET (start, end, deviceId, contextId, streamId, value, bytes)
  VALUES (1300, 1310, 0, 1, 7, 0, 1024);
CREATE TABLE NVTX_EVENTS (start INTEGER NOT NULL, end INTEGER, eventType INTEGER NOT NULL,
  rangeId INTEGER, category INTEGER, color INTEGER, text TEXT, globalTid INTEGER,
  endGlobalTid INTEGER, textId INTEGER, domainId INTEGER, uint64Value INTEGER);
INSERT INTO NVTX_EVENTS (start, end, eventType, text, globalTid, textId) VALUES
  (1400, 4000, 59, 'step 5', 281479271677953, NULL), (1450, 1650, 59, NULL, 281479271677953, 4),
  (1460, 1640, 59, 'layer 2 mb=1', 281479271677953, NULL), (1800, NULL, 34, 'a mark', 281479271677953, NULL);
CREATE TABLE TARGET_INFO_GPU (vmId INTEGER, id INTEGER, name TEXT, busLocation TEXT, totalMemory INTEGER);
INSERT INTO TARGET_INFO_GPU VALUES (0, 0, 'NVIDIA H100 80GB HBM3', '0000:1b:00.0', 85031714816);
CREATE TABLE TARGET_INFO_SESSION_START_TIME (utcEpochNs INTEGER, utcTime TEXT, localTime TEXT);
INSERT INTO TARGET_INFO_SESSION_START_TIME VALUES (1700000000123456789, 'x', 'y');
