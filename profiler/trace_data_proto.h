// trace_data.h structs -> proto/trace.proto messages, for collectors used in-process
// (qprof run --backend cuda) and for the test that holds trace_wire.h's bytes against
// protobuf's serializer. Links protobuf, so never part of the injection library.
#ifndef QPROF_PROFILER_TRACE_DATA_PROTO_H_
#define QPROF_PROFILER_TRACE_DATA_PROTO_H_

#include "absl/status/status.h"
#include "profiler/core_status.h"
#include "profiler/trace_data.h"
#include "proto/trace.pb.h"

namespace qprof::profiler {

void ToProto(const ActivityData& in, proto::Activity* out);
void ToProto(const RangeData& in, proto::NvtxRange* out);
void ToProto(const DeviceData& in, proto::DeviceInfo* out);
void ToProto(const RunData& in, proto::RunInfo* out);
void ToProto(const ProcessData& in, proto::ProcessInfo* out);
void ToProto(const HeaderData& in, proto::TraceHeader* out);
void ToProto(const FooterData& in, proto::TraceFooter* out);
// Merges: counts are added, flags or'ed, texts set when not empty, lists appended (so
// several collectors may fill one trace's statistics).
void ToProto(const CollectorStatsData& in, proto::CollectorStats* out);

// The same status as an absl::Status (codes share their numbering).
absl::Status ToAbslStatus(const CoreStatus& s);

}  // namespace qprof::profiler

#endif  // QPROF_PROFILER_TRACE_DATA_PROTO_H_
