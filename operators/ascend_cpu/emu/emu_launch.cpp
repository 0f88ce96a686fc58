/* A launch's cores as concurrent threads: cross-core flags, SyncAll, deadlock and GM race detection (emu_launch.h). */
#include "emu_launch.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <deque>
#include <map>
#include <memory>
#include <mutex>
#include <system_error>
#include <thread>
#include <tuple>
#include <vector>

namespace ascend_cpu {

namespace {

/* Vector clock: entry s counts the releases (cross-core sets, SyncAll arrivals) of the core in slot s. */
using Clock = std::vector<uint32_t>;

void JoinInto(Clock& into, const Clock& from)
{
    for (size_t i = 0; i < into.size(); ++i) {
        into[i] = std::max(into[i], from[i]);
    }
}

/* A recorded GM access: `runs` runs of `len` bytes, `stride` apart, from `base`; [lo, hi) bounds them. */
struct Access {
    int64_t base;
    int64_t runs;
    int64_t len;
    int64_t stride;
    int64_t lo;
    int64_t hi;
    uint32_t slot;
    uint32_t clock;
    bool write;
    const char* what;
};

int64_t FloorDiv(int64_t a, int64_t b) { return a / b - ((a % b != 0) && ((a < 0) != (b < 0))); }

/* First byte range both accesses touch ({0, 0} when they are disjoint). */
std::pair<int64_t, int64_t> Overlap(const Access& a, const Access& b)
{
    const Access& x = a.runs <= b.runs ? a : b;
    const Access& y = a.runs <= b.runs ? b : a;
    for (int64_t i = 0; i < x.runs; ++i) {
        const int64_t s = x.base + i * x.stride;
        int64_t jLo = 0;
        int64_t jHi = y.runs - 1;
        if (y.runs > 1 && y.stride > 0) {
            jLo = std::max<int64_t>(0, FloorDiv(s - y.len - y.base, y.stride) + 1);
            jHi = std::min<int64_t>(y.runs - 1, FloorDiv(s + x.len - 1 - y.base, y.stride));
        }
        for (int64_t j = jLo; j <= jHi; ++j) {
            const int64_t t = y.base + j * y.stride;
            const int64_t lo = std::max(s, t);
            const int64_t hi = std::min(s + x.len, t + y.len);
            if (lo < hi) {
                return {lo, hi};
            }
            if (y.runs > 1 && y.stride > 0) {
                break;  // the one candidate run of y missed
            }
        }
    }
    return {0, 0};
}

/* Sets of one cross-core round that must all arrive before the round is delivered (modes 0, 1 and 2 AIV -> AIC):
 * one queue of release clocks per participant. */
struct Combiner {
    std::vector<std::deque<Clock>> sets;
};

struct SyncBarrier {
    uint32_t arrived = 0;
    uint64_t generation = 0;
    Clock acc;
    std::map<uint64_t, Clock> released;
};

/* One access to a shared local buffer: bytes [lo, hi) by `slot` on `pipe`, at its release count `clock`. */
struct SharedAccessRecord {
    uint32_t lo;
    uint32_t hi;
    uint32_t slot;
    uint32_t clock;
    Pipe pipe;
    bool write;
    const char* what;
};

/* Thrown in a waiting core when another core's fault ended the launch: only the cause is reported. */
struct Aborted {};

/* A race names both cores itself and is filed under the lower one, whichever of the two detected it. */
struct RaceFault {
    std::string what;
    uint32_t slot;
};

struct LaunchState {
    const char* kernel = "";
    uint32_t numBlocks = 0;
    const std::function<void()>* body = nullptr;
    std::mutex mu;
    std::condition_variable cv;
    uint32_t live = 0;
    uint32_t blocked = 0;
    bool declaredSet = false;
    Declared declared = Declared::AIV_ONLY;
    std::vector<std::thread> threads;
    std::vector<Clock> clocks;  // by slot; entry [s] of slot s is only written by its own thread
    std::vector<std::array<std::deque<Clock>, kCrossCoreIds>> counters;  // pending sets by slot and flag id
    std::map<std::tuple<int, int, uint32_t, uint32_t>, Combiner> combiners;  // (mode, role, group, id)
    SyncBarrier barriers[2];  // [0] every core, [1] every AIV
    /* slot -> what it waits for, and whether that is there: a core woken but not yet running is not stuck. */
    std::map<uint32_t, std::pair<std::string, std::function<bool()>>> waiting;
    std::string deadlock;
    bool aborted = false;
    std::map<uint32_t, std::string> failures;  // slot -> fault; the lowest slot's is reported
    std::mutex shadowMu;
    std::vector<Access> reads;
    std::vector<Access> writes;
    /* Every core of the launch by slot, made before any thread starts, kept until the launch ends: the cores of an
     * AI core copy into each other's L1 and UB. */
    std::vector<std::unique_ptr<Core>> cores;
    /* Accesses to the buffers an AI core's cores share, by owner slot: [0] the AIC's L1, [1] an AIV's UB. */
    std::vector<std::vector<SharedAccessRecord>> shared[2];
    std::unique_ptr<std::mutex[]> sharedMu;  // by owner slot: only the cores of one AI core contend
};

LaunchState* g_launch = nullptr;  // the running launch: kernels on the stream run one after another

uint32_t Slots(const LaunchState& l) { return 3 * l.numBlocks; }

bool HasSubBlocks(const LaunchState& l) { return l.declared == Declared::MIX_AIC_1_2; }

uint32_t AivSlot(const LaunchState& l, uint32_t group, uint32_t sub)
{
    return HasSubBlocks(l) ? l.numBlocks + 2 * group + sub : group;
}

/* A slot's place in its AI core for the cross-core pipe clocks: 0 the AIC, 1 + s the AIV of sub-block s. */
uint32_t GroupMember(const LaunchState& l, uint32_t slot)
{
    return slot < l.numBlocks ? 0 : 1 + (slot - l.numBlocks) % 2;
}

/* Under the caller's thread: pipe `pipe` of core c (S: every pipe, it stalls issue) has seen `release`. */
void JoinPipeClocks(const LaunchState& l, Core& c, Pipe pipe, const Clock& release)
{
    if (!HasSubBlocks(l)) {
        return;
    }
    const uint32_t members[3] = {c.group, AivSlot(l, c.group, 0), AivSlot(l, c.group, 1)};
    for (int q = 0; q < kPipes; ++q) {
        if (pipe != Pipe::S && pipe != Pipe::COUNT && q != static_cast<int>(pipe)) {
            continue;
        }
        for (int g = 0; g < 3; ++g) {
            c.xclk[q][g] = std::max(c.xclk[q][g], release[members[g]]);
        }
    }
}

std::string SlotName(const LaunchState& l, uint32_t slot)
{
    if (slot >= l.numBlocks) {
        return "AIV block " + std::to_string(slot - l.numBlocks);
    }
    const bool aic = l.declared == Declared::AIC_ONLY || l.declared == Declared::MIX_AIC_1_0 || HasSubBlocks(l);
    return (aic ? "AIC block " : "AIV block ") + std::to_string(slot);
}

/* The slots of every core of `role` in the launch. */
std::vector<uint32_t> RoleSlots(const LaunchState& l, KernelType role)
{
    std::vector<uint32_t> out;
    const bool aicLaunch = l.declared == Declared::AIC_ONLY || l.declared == Declared::MIX_AIC_1_0;
    for (uint32_t b = 0; b < l.numBlocks; ++b) {
        if (role == KernelType::AIC && (aicLaunch || HasSubBlocks(l))) {
            out.push_back(b);
        } else if (role == KernelType::AIV && HasSubBlocks(l)) {
            out.push_back(AivSlot(l, b, 0));
            out.push_back(AivSlot(l, b, 1));
        } else if (role == KernelType::AIV && !aicLaunch) {
            out.push_back(b);
        }
    }
    return out;
}

/* Under l.mu: when every live core waits, nothing can wake any of them. */
void CheckDeadlock(LaunchState& l)
{
    if (l.live == 0 || l.blocked < l.live || !l.deadlock.empty() || l.aborted) {
        return;
    }
    for (const auto& entry : l.waiting) {
        if (entry.second.second()) {
            return;  // its signal arrived; it has not run since
        }
    }
    if (!l.failures.empty()) {
        l.aborted = true;  // they wait for a core that failed
    } else {
        std::string list;
        uint32_t shown = 0;
        for (const auto& [slot, wait] : l.waiting) {
            if (shown++ == 8) {
                list += "; and " + std::to_string(l.waiting.size() - 8) + " more";
                break;
            }
            list += (list.empty() ? "" : "; ") + SlotName(l, slot) + " waits for " + wait.first;
        }
        l.deadlock = "deadlock: every live core of the launch waits and none can signal (" + list + ")";
    }
    l.cv.notify_all();
}

/* Under lk (l.mu): blocks the calling core until ready(); a deadlock or a wait past the limit is a Fault. */
template <typename Ready>
void WaitUntil(LaunchState& l, std::unique_lock<std::mutex>& lk, const Core& c, const std::string& what, Ready ready)
{
    if (ready()) {
        return;
    }
    ++l.blocked;
    l.waiting[c.slot] = {what, ready};
    CheckDeadlock(l);
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(kWaitLimitSeconds);
    bool late = false;
    while (!ready() && l.deadlock.empty() && !l.aborted && !late) {
        late = l.cv.wait_until(lk, deadline) == std::cv_status::timeout;
    }
    --l.blocked;
    l.waiting.erase(c.slot);
    if (ready()) {
        return;
    }
    if (l.aborted) {
        throw Aborted{};
    }
    Raise(late ? what + ": still waiting after " + std::to_string(kWaitLimitSeconds) + " s (bounded wait)" : l.deadlock);
}

LaunchState& Current(const char* what)
{
    if (g_launch == nullptr || !Cur().device) {
        Raise(std::string(what) + " outside a kernel launch");
    }
    return *g_launch;
}

void RequireScheduler(const Core& c, const char* what)
{
    if (!c.mix) {
        Raise(std::string(what) + " in a kernel declared KERNEL_TYPE_" + (c.type == KernelType::AIC ? "AIC" : "AIV") +
              "_ONLY: the hardware starts no cross-core scheduler for it (asc-devkit CrossCoreSetFlag, constraints: "
              "declare KERNEL_TYPE_MIX_*)");
    }
}

/* The call as messages name it, once the core is known to have the scheduler. */
std::string CrossCoreCall(const char* name, int mode, Pipe pipe, uint32_t id)
{
    RequireScheduler(Cur(), name);
    return std::string(name) + "<" + std::to_string(mode) + ", PIPE_" + (pipe == Pipe::COUNT ? "ALL" : PipeName(pipe)) +
           ">(" + std::to_string(id) + ")";
}

/* Under l.mu: one pending set (with its release clock) on `slot`'s counter `id`. */
void Deliver(LaunchState& l, uint32_t slot, uint32_t id, const Clock& clock)
{
    auto& q = l.counters[slot][id];
    if (q.size() >= kCrossCoreMaxSets) {
        Raise("CrossCoreSetFlag(" + std::to_string(id) + "): the counter of " + SlotName(l, slot) + " would pass " +
              std::to_string(kCrossCoreMaxSets) + " pending sets (asc-devkit: at most 15 per flag id)");
    }
    q.push_back(clock);
}

/* Under l.mu: participant `who` of `parts` set round `key`; completed rounds go to every target. */
void Combine(LaunchState& l, const std::tuple<int, int, uint32_t, uint32_t>& key, const std::vector<uint32_t>& parts,
             uint32_t who, const std::vector<uint32_t>& targets, uint32_t id, const Clock& clock)
{
    Combiner& cb = l.combiners[key];
    cb.sets.resize(parts.size());
    const auto at = std::find(parts.begin(), parts.end(), who);
    cb.sets[static_cast<size_t>(at - parts.begin())].push_back(clock);
    while (std::all_of(cb.sets.begin(), cb.sets.end(), [](const std::deque<Clock>& q) { return !q.empty(); })) {
        Clock round(Slots(l), 0);
        for (auto& q : cb.sets) {
            JoinInto(round, q.front());
            q.pop_front();
        }
        for (uint32_t t : targets) {
            Deliver(l, t, id, round);
        }
    }
}

void EndCore(const Core& c)
{
    for (int s = 0; s < kPipes; ++s) {
        for (int d = 0; d < kPipes; ++d) {
            for (int id = 0; id < kEventIds; ++id) {
                if (c.flags[s][d][id].set) {
                    Raise(std::string("kernel ended with SetFlag<") + PipeName(static_cast<Pipe>(s)) + "_" +
                          PipeName(static_cast<Pipe>(d)) + ">(" + std::to_string(id) +
                          ") never waited for (unpaired flag: the next kernel on this core inherits it)");
                }
            }
        }
    }
    for (size_t block = 0; block < c.unitFlags.size(); ++block) {
        if (c.unitFlags[block] != 0) {
            Raise("kernel ended with L0C block at " + std::to_string(block * kUnitFlagBlock) + " marked by an Mmad "
                  "with unitFlag 3 that no Fixpipe with unitFlag 3 read (asc-devkit UnitFlag.md: the next kernel's "
                  "Mmad with unitFlag 2/3 there hangs; SetFixPipeConfig resets it)");
        }
    }
}

void RunCore(LaunchState* l, uint32_t slot, bool aivSubBlock, uint32_t group, uint32_t sub)
{
    Core* core = l->cores[slot].get();
    core->device = true;
    core->slot = slot;
    core->group = group;
    core->subBlock = sub;
    core->blockIdx = aivSubBlock ? 2 * group + sub : group;
    core->blockNum = l->numBlocks;
    if (aivSubBlock) {
        core->type = KernelType::AIV;
        core->mix = true;
        core->aivPerAic = 2;
    }
    LaunchStats stats;
    BindThread(core, &stats);
    std::string fault;
    uint32_t faultSlot = slot;
    bool aborted = false;
    try {
        (*l->body)();
        EndCore(*core);
        ++stats.blocks;
    } catch (const Fault& f) {
        fault = CoreName(*core) + ": " + f.what;
    } catch (const RaceFault& f) {
        fault = f.what;
        faultSlot = f.slot;
    } catch (const Aborted&) {
        aborted = true;
    } catch (const std::exception& e) {
        fault = CoreName(*core) + ": " + e.what();
    }
    BindThread(nullptr, nullptr);
    MergeStats(stats);
    std::lock_guard<std::mutex> lock(l->mu);
    if (!fault.empty() && !aborted) {
        auto [at, fresh] = l->failures.emplace(faultSlot, fault);
        if (!fresh && fault < at->second) {
            at->second = fault;  // two faults filed under one core: the same one whatever the interleaving
        }
    }
    --l->live;
    CheckDeadlock(*l);
    l->cv.notify_all();
}

/* After the launch: a cross-core set nobody waited for would let the next kernel's wait pass early. */
std::string Unpaired(const LaunchState& l)
{
    for (uint32_t s = 0; s < Slots(l); ++s) {
        for (uint32_t id = 0; id < kCrossCoreIds; ++id) {
            if (!l.counters[s][id].empty()) {
                return SlotName(l, s) + ": CrossCoreSetFlag to flag id " + std::to_string(id) + " never waited for ("
                       + std::to_string(l.counters[s][id].size()) + " pending when the launch ended: an unpaired "
                       "cross-core set)";
            }
        }
    }
    for (const auto& [key, cb] : l.combiners) {
        for (const auto& q : cb.sets) {
            if (!q.empty()) {
                return "CrossCoreSetFlag<" + std::to_string(std::get<0>(key)) + ">(" +
                       std::to_string(std::get<3>(key)) + ") set by some cores of its group but not all when the "
                       "launch ended (the round never completes)";
            }
        }
    }
    return "";
}

}  // namespace

void RunLaunch(const char* kernel, uint32_t numBlocks, const std::function<void()>& body)
{
    if (StreamFailed()) {
        return;
    }
    ++Stats().launches;
    if (numBlocks == 0) {
        RecordFault(kernel, 0, "launched with 0 blocks");
        return;
    }
    LaunchState l;
    l.kernel = kernel;
    l.numBlocks = numBlocks;
    l.body = &body;
    l.clocks.assign(Slots(l), Clock(Slots(l), 0));
    for (uint32_t s = 0; s < Slots(l); ++s) {
        l.clocks[s][s] = 1;
    }
    l.counters.resize(Slots(l));
    l.cores.resize(Slots(l));
    for (auto& core : l.cores) {
        core = std::make_unique<Core>();
        for (int b = 0; b < kBufs; ++b) {
            core->mem[b].Init(kCapacity[b]);
        }
    }
    l.shared[0].resize(Slots(l));
    l.shared[1].resize(Slots(l));
    l.sharedMu = std::make_unique<std::mutex[]>(Slots(l));
    l.barriers[0].acc = l.barriers[1].acc = Clock(Slots(l), 0);
    g_launch = &l;
    {
        std::unique_lock<std::mutex> lk(l.mu);
        try {
            for (uint32_t b = 0; b < numBlocks; ++b) {
                l.threads.emplace_back(RunCore, &l, b, false, b, 0);
                ++l.live;
            }
        } catch (const std::system_error& e) {
            l.failures.emplace(0, std::string("block ") + std::to_string(l.threads.size()) + ": cannot start its "
                                  "core thread (" + e.what() + ")");
            l.aborted = true;
            l.cv.notify_all();
        }
        l.cv.wait(lk, [&l]() { return l.live == 0; });
    }
    for (std::thread& t : l.threads) {
        t.join();
    }
    g_launch = nullptr;
    if (!l.failures.empty()) {
        RecordLaunchFault(std::string(kernel) + " " + l.failures.begin()->second);
        return;
    }
    const std::string unpaired = Unpaired(l);
    if (!unpaired.empty()) {
        RecordLaunchFault(std::string(kernel) + " " + unpaired);
    }
}

void EnterKernel(Declared type)
{
    Core& c = Cur();
    if (!c.device) {
        return;
    }
    LaunchState& l = *g_launch;
    std::lock_guard<std::mutex> lock(l.mu);
    if (!l.declaredSet) {
        l.declared = type;
        l.declaredSet = true;
    }
    if (type == Declared::MIX_AIC_1_2 && c.type == KernelType::AIV) {
        return;  // a sub-block, started by its AIC
    }
    c.mix = type != Declared::AIC_ONLY && type != Declared::AIV_ONLY;
    c.type = type == Declared::AIV_ONLY || type == Declared::MIX_AIV_1_0 ? KernelType::AIV : KernelType::AIC;
    if (type == Declared::MIX_AIC_1_2) {
        c.aivPerAic = 2;
        for (uint32_t sub = 0; sub < 2; ++sub) {
            l.threads.emplace_back(RunCore, &l, AivSlot(l, c.group, sub), true, c.group, sub);
            ++l.live;  // only a thread that exists is waited for
        }
    }
}

void CrossCoreSet(int mode, Pipe pipe, uint32_t id)
{
    LaunchState& l = Current("CrossCoreSetFlag");
    Core& c = Cur();
    const std::string call = CrossCoreCall("CrossCoreSetFlag", mode, pipe, id);
    if (mode != 0 && mode != 1 && mode != 2 && mode != 4) {
        Raise(call + ": mode " + std::to_string(mode) + " does not exist on the 950PR (0, 1, 2 and 4)");
    }
    if (pipe == Pipe::COUNT || (pipe == Pipe::S && mode != 4)) {
        Raise(call + ": PIPE_S and PIPE_ALL are not allowed (asc-devkit CrossCoreSetFlag, pipe)");
    }
    const bool aicIds16 = mode == 4 && c.type == KernelType::AIC;
    if ((mode != 4 && id > 15) || (mode == 4 && id > 10 && !(aicIds16 && id >= 16 && id <= 26))) {
        Raise(call + ": flag id out of range (modes 0-2: 0-15; mode 4: 0-10, and 16-26 from the AIC)");
    }
    if ((mode == 1 && c.type != KernelType::AIV) || ((mode == 1 || mode == 2 || mode == 4) && c.aivPerAic != 2)) {
        Raise(call + ": mode " + std::to_string(mode) + " needs a KERNEL_TYPE_MIX_AIC_1_2 kernel" +
              (mode == 1 ? ", on an AIV" : ""));
    }
    /* The set waits for its own pipe's earlier instructions only (asc-devkit CrossCoreSetFlag(ISASI), pipe): a copy
     * into another core's buffer on another pipe, not signalled to this one, is not published by it. */
    for (int q = 0; q < kPipes; ++q) {
        if (q != static_cast<int>(pipe) && c.unpublished[q] > c.visible[static_cast<int>(pipe)][q]) {
            Raise(call + ": pipe error: the set is on PIPE_" + PipeName(pipe) + " but the " + c.unpublishedWhat[q] +
                  " it publishes was issued on PIPE_" + PipeName(static_cast<Pipe>(q)) + " (the set waits only for "
                  "its own pipe's earlier instructions: asc-devkit CrossCoreSetFlag(ISASI), pipe)");
        }
    }
    for (int q = 0; q < kPipes; ++q) {
        c.unpublished[q] = 0;
    }
    std::lock_guard<std::mutex> lock(l.mu);
    const Clock release = l.clocks[c.slot];
    ++l.clocks[c.slot][c.slot];
    const int role = static_cast<int>(c.type);
    const std::vector<uint32_t> aivs = {AivSlot(l, c.group, 0), AivSlot(l, c.group, 1)};
    if (mode == 0) {
        const std::vector<uint32_t> all = RoleSlots(l, c.type);
        Combine(l, {0, role, 0, id}, all, c.slot, all, id, release);
    } else if (mode == 1) {
        Combine(l, {1, role, c.group, id}, aivs, c.slot, aivs, id, release);
    } else if (mode == 2 && c.type == KernelType::AIC) {
        Deliver(l, aivs[0], id, release);
        Deliver(l, aivs[1], id, release);
    } else if (mode == 2) {
        Combine(l, {2, role, c.group, id}, aivs, c.slot, {c.group}, id, release);
    } else if (c.type == KernelType::AIC) {
        Deliver(l, aivs[id >= 16 ? 1 : 0], id >= 16 ? id - 16 : id, release);
    } else {
        Deliver(l, c.group, id + 16 * c.subBlock, release);
    }
    l.cv.notify_all();
}

void CrossCoreWait(int mode, Pipe pipe, uint32_t id)
{
    LaunchState& l = Current("CrossCoreWaitFlag");
    Core& c = Cur();
    const std::string call = CrossCoreCall("CrossCoreWaitFlag", mode, pipe, id);
    if (id >= kCrossCoreIds || (mode != 4 && id > 15)) {
        Raise(call + ": flag id out of range");
    }
    std::unique_lock<std::mutex> lk(l.mu);
    auto& q = l.counters[c.slot][id];
    WaitUntil(l, lk, c, call, [&q]() { return !q.empty(); });
    JoinInto(l.clocks[c.slot], q.front());
    JoinPipeClocks(l, c, pipe, q.front());
    q.pop_front();
}

void SyncAllCores(bool aivOnly)
{
    LaunchState& l = Current("SyncAll");
    Core& c = Cur();
    RequireScheduler(c, "SyncAll");
    if (aivOnly && c.type != KernelType::AIV) {
        Raise("SyncAll<true> (vector cores only) on an AIC: the cube cores would not take part");
    }
    std::unique_lock<std::mutex> lk(l.mu);
    const uint32_t parts = static_cast<uint32_t>(
        aivOnly ? RoleSlots(l, KernelType::AIV).size()
                : RoleSlots(l, KernelType::AIV).size() + RoleSlots(l, KernelType::AIC).size());
    SyncBarrier& b = l.barriers[aivOnly ? 1 : 0];
    JoinInto(b.acc, l.clocks[c.slot]);
    ++l.clocks[c.slot][c.slot];
    const uint64_t gen = b.generation;
    if (++b.arrived == parts) {
        b.released[gen] = b.acc;
        b.acc.assign(Slots(l), 0);
        b.arrived = 0;
        ++b.generation;
        l.cv.notify_all();
    }
    WaitUntil(l, lk, c, std::string("SyncAll<") + (aivOnly ? "true" : "false") + "> (" + std::to_string(parts) +
                            " cores take part)", [&b, gen]() { return b.generation > gen; });
    JoinInto(l.clocks[c.slot], b.released[gen]);
    JoinPipeClocks(l, c, Pipe::COUNT, b.released[gen]);
}

void GmAccess(const void* base, uint64_t runs, uint64_t runBytes, uint64_t strideBytes, bool write, const char* what)
{
    const Core& c = Cur();
    if (g_launch == nullptr || !c.device || runs == 0 || runBytes == 0) {
        return;
    }
    LaunchState& l = *g_launch;
    const auto b = static_cast<int64_t>(reinterpret_cast<uintptr_t>(base));
    const auto n = static_cast<int64_t>(runs);
    const auto len = static_cast<int64_t>(runBytes);
    const auto stride = static_cast<int64_t>(strideBytes);
    const Clock& mine = l.clocks[c.slot];
    const Access a{b, n, len, stride, b, b + (n - 1) * stride + len, c.slot, mine[c.slot], write, what};
    std::lock_guard<std::mutex> lock(l.shadowMu);
    (write ? l.writes : l.reads).push_back(a);  // kept even when it races: the other side reports it too
    const Access* worst = nullptr;  // the conflicting access of the lowest core, for a deterministic report
    auto check = [&](const std::vector<Access>& records) {
        for (const Access& r : records) {
            if (r.slot == a.slot || r.hi <= a.lo || a.hi <= r.lo || mine[r.slot] >= r.clock ||
                (worst != nullptr && worst->slot <= r.slot)) {
                continue;
            }
            const auto [lo, hi] = Overlap(a, r);
            if (lo != hi) {
                worst = &r;
            }
        }
    };
    check(l.writes);
    if (write) {
        check(l.reads);
    }
    if (worst == nullptr) {
        return;
    }
    /* The message names the pair in slot order, so either core's detection reports the same text. */
    const Access& x = worst->slot < a.slot ? *worst : a;
    const Access& y = worst->slot < a.slot ? a : *worst;
    const auto [lo, hi] = Overlap(x, y);
    char range[64];
    std::snprintf(range, sizeof(range), "[%#llx, %#llx)", static_cast<unsigned long long>(lo),
                  static_cast<unsigned long long>(hi));
    auto side = [&l](const Access& z) {
        return SlotName(l, z.slot) + " (" + z.what + ", " + (z.write ? "write" : "read") + ")";
    };
    throw RaceFault{std::string("GM race on bytes ") + range + ": " + side(x) + " and " + side(y) +
                        " in the same launch with no cross-core synchronisation between them (a missing "
                        "CrossCoreSetFlag/CrossCoreWaitFlag or SyncAll barrier)",
                    x.slot};
}

Core& SharedCore(uint32_t slot, const char* what)
{
    LaunchState& l = Current(what);
    if (!HasSubBlocks(l) || slot >= Slots(l)) {
        Raise(std::string(what) + " needs a KERNEL_TYPE_MIX_AIC_1_2 kernel: only the cube and vector cores of one AI "
              "core share the UB <-> L1 / L0C -> UB paths");
    }
    return *l.cores[slot];
}

uint32_t AicSlotOf(const Core& c) { return c.group; }

uint32_t AivSlotOf(const Core& c, uint32_t sub) { return AivSlot(*g_launch, c.group, sub); }

bool SharedUsed(Buf b, uint32_t owner)
{
    const Core& c = Cur();
    if (g_launch == nullptr || !c.device || !HasSubBlocks(*g_launch)) {
        return false;
    }
    (void)b;
    (void)owner;
    return true;
}

void SharedAccess(Buf b, uint32_t owner, uint64_t lo, uint64_t hi, Pipe p, bool write, const char* what)
{
    Core& c = Cur();
    LaunchState& l = Current(what);
    const int which = b == Buf::L1 ? 0 : 1;
    const uint32_t mine = l.clocks[c.slot][c.slot];
    std::lock_guard<std::mutex> lock(l.sharedMu[owner]);
    auto& list = l.shared[which][owner];
    for (const SharedAccessRecord& r : list) {
        if (r.slot == c.slot || r.hi <= lo || hi <= r.lo || (!r.write && !write)) {
            continue;
        }
        if (c.xclk[static_cast<int>(p)][GroupMember(l, r.slot)] >= r.clock) {
            continue;
        }
        /* Named in slot order, so either core's detection gives the same text. */
        const bool curFirst = c.slot < r.slot;
        const uint64_t olo = std::max<uint64_t>(lo, r.lo);
        const uint64_t ohi = std::min<uint64_t>(hi, r.hi);
        auto side = [&l](uint32_t slot, const char* w, bool wr, Pipe pp) {
            return SlotName(l, slot) + " (" + w + ", " + (wr ? "write" : "read") + " on PIPE_" + PipeName(pp) + ")";
        };
        const std::string mineSide = side(c.slot, what, write, p);
        const std::string theirs = side(r.slot, r.what, r.write, r.pipe);
        char range[64];
        std::snprintf(range, sizeof(range), "[%#llx, %#llx)", static_cast<unsigned long long>(olo),
                      static_cast<unsigned long long>(ohi));
        std::string msg = std::string(BufName(b)) + " race on bytes " + range + " of " + SlotName(l, owner) + "'s " +
                          BufName(b) + ": " + (curFirst ? mineSide + " and " + theirs : theirs + " and " + mineSide);
        if (l.clocks[c.slot][r.slot] >= r.clock) {
            msg += ": pipe error: " + SlotName(l, c.slot) + " received " + SlotName(l, r.slot) + "'s cross-core "
                   "flag on another pipe than PIPE_" + PipeName(p) + " (on the 950PR a CrossCoreWaitFlag blocks only "
                   "its own pipe's later instructions: asc-devkit CrossCoreWaitFlag(ISASI), pipe)";
        } else {
            msg += " in the same launch with no cross-core flag ordering them (a missing CrossCoreSetFlag/"
                   "CrossCoreWaitFlag handshake)";
        }
        throw RaceFault{msg, std::min(c.slot, r.slot)};
    }
    list.erase(std::remove_if(list.begin(), list.end(),
                              [&](const SharedAccessRecord& a) {
                                  return lo <= a.lo && a.hi <= hi && (write || (a.slot == c.slot && !a.write));
                              }),
               list.end());
    list.push_back({static_cast<uint32_t>(lo), static_cast<uint32_t>(hi), c.slot, mine, p, write, what});
}

}  // namespace ascend_cpu
