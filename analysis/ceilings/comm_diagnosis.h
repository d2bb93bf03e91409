// Communication against the hardware: link peaks for the collectives and copies of a
// Profile, and the tensor-parallel decode diagnosis.
//
// Link peaks come from the device spec table (analysis/devices/specs/*.json), per direction,
// each with its source:
//   collectives         the GPU-to-GPU link (interconnect_gbps: NVLink generation, or PCIe
//                       generation and width for cards without NVLink); compared with busbw,
//                       which nccl-tests defines to be comparable with it;
//   HtoD, DtoH, HtoH    the host link (host_link_gbps);
//   PtoP                the GPU-to-GPU link;
//   DtoD                half the DRAM bandwidth: a device-to-device copy reads and writes
//                       every byte, and its rate counts each byte once;
//   memset              the DRAM bandwidth (writes only).
//
// The tensor-parallel diagnosis (Profile.tp_diagnosis) is made when every step of the
// profile runs collective kernels and the steps hold every collective launch: per step and GPU, the collective time and its share of
// the step, the exposed part (comm.exposed_ns over steps and GPUs), the dominant collective's
// bus bandwidth against the link, and, for a link that is not NVLink, what the NVLink figure
// of the same GPU generation would give. That last figure is modelled, by Amdahl on the
// exposed part: the exposed time scales by r = link / NVLink (the collective is assumed to
// keep its share of the link's peak), so the step speeds up by 1 / (1 - f + f r) with f the
// exposed share of the step. Small messages are latency-bound and gain less: an upper bound.
#ifndef QPROF_ANALYSIS_CEILINGS_COMM_DIAGNOSIS_H_
#define QPROF_ANALYSIS_CEILINGS_COMM_DIAGNOSIS_H_

#include "analysis/devices/device_specs.h"
#include "proto/profile.pb.h"

namespace qprof::ceilings {

// Sets the link fields of profile->comm().collectives() and profile->copies() from `device`
// (nullptr: the device is not in the spec table, and the rows say so).
void AddLinkPeaks(const devices::DeviceSpec* device, proto::Profile* profile);

// Fills profile->tp_diagnosis() when the profile has steps and every step runs collectives;
// needs the steps, comm and link peaks of the profile (call AddLinkPeaks first).
void DiagnoseTensorParallel(const devices::DeviceSpec* device, proto::Profile* profile);

// The NVLink device of the spec table for a GPU without NVLink: the fastest NVLink of the same
// generation (sm_100 and sm_120 are both Blackwell), else the fastest in the table.
const devices::DeviceSpec* NvlinkCounterpart(const devices::DeviceSpec& device);

}  // namespace qprof::ceilings

#endif  // QPROF_ANALYSIS_CEILINGS_COMM_DIAGNOSIS_H_
