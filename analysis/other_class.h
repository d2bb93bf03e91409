// The headline's class "other": Profile.other_class when kernels with no evidence of their
// pipe hold more than kOtherHeadlineShare of kernel time, with the largest of them.
#ifndef QPROF_ANALYSIS_OTHER_CLASS_H_
#define QPROF_ANALYSIS_OTHER_CLASS_H_

#include "proto/profile.pb.h"

namespace qprof {

// Reads the kernel rows (sorted by time) and their shares; sets nothing at or under the share.
void HeadlineOtherClass(proto::Profile* profile);

}  // namespace qprof

#endif  // QPROF_ANALYSIS_OTHER_CLASS_H_
