/* The emulated core's checks (emu_core.h): flags, pipe visibility, local-buffer bounds, GM bounds. */
#include "emu_core.h"

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <iterator>
#include <map>
#include <mutex>

#include <sys/mman.h>

#include "emu_launch.h"

namespace ascend_cpu {

namespace {

/* The host thread's core: outside a launch only the host side runs, which never touches local buffers. */
Core g_hostCore;
thread_local Core* t_core = &g_hostCore;
std::string g_fault;
std::mutex g_faultMutex;
LaunchStats g_stats;
thread_local LaunchStats* t_stats = &g_stats;
std::map<uintptr_t, uint64_t> g_gm;
/* Guards g_gm and g_dcache: launch threads check GM bounds and read through their DCache concurrently. */
std::mutex g_gmMutex;
/* DCache words: (core type, block index) -> word address -> cached bytes. */
std::map<std::pair<int, uint32_t>, std::map<uintptr_t, uint32_t>> g_dcache;
constexpr uintptr_t kCacheLine = 64;

std::pair<int, uint32_t> CoreKey() { return {static_cast<int>(t_core->type), t_core->blockIdx}; }

std::string Hex(uint64_t v)
{
    char buf[32];
    std::snprintf(buf, sizeof(buf), "%#llx", static_cast<unsigned long long>(v));
    return buf;
}

std::string Range(uint64_t lo, uint64_t hi) { return "[" + std::to_string(lo) + ", " + std::to_string(hi) + ")"; }

int Idx(Pipe p) { return static_cast<int>(p); }

void CheckEventId(int32_t id, const char* call, const char* event)
{
    if (id < 0 || id >= kEventIds) {
        Raise(std::string(call) + "<" + event + ">(" + std::to_string(id) + "): event id outside 0.." +
              std::to_string(kEventIds - 1) + " (arch35 has " + std::to_string(kEventIds) + " per pipe pair)");
    }
}

}  // namespace

const char* PipeName(Pipe p)
{
    static const char* names[] = {"S", "V", "M", "MTE1", "MTE2", "MTE3", "FIX"};
    return names[Idx(p)];
}

const char* BufName(Buf b)
{
    static const char* names[] = {"L1", "L0A", "L0B", "L0C", "UB"};
    return names[static_cast<int>(b)];
}

void Raise(const std::string& what) { throw Fault{what}; }

Core& Cur() { return *t_core; }

void BindThread(Core* core, LaunchStats* stats)
{
    t_core = core != nullptr ? core : &g_hostCore;
    t_stats = stats != nullptr ? stats : &g_stats;
}

std::string CoreName(const Core& c)
{
    const char* role = c.type == KernelType::AIC ? "AIC block " : c.type == KernelType::AIV ? "AIV block " : "block ";
    return role + std::to_string(c.blockIdx);
}

LaunchStats& Stats() { return *t_stats; }

void MergeStats(const LaunchStats& s)
{
    std::lock_guard<std::mutex> lock(g_faultMutex);
    g_stats.blocks += s.blocks;
    g_stats.cubeMacs += s.cubeMacs;
    g_stats.gmBytes += s.gmBytes;
    for (int i = 0; i < kInstrKinds; ++i) {
        g_stats.instr[i] += s.instr[i];
    }
}

void CountInstr(Instr i, uint64_t n) { t_stats->instr[i] += n; }

LocalBuffer::~LocalBuffer()
{
    if (p_.load() != nullptr) {
        munmap(p_.load(), bytes_);
    }
}

uint8_t* LocalBuffer::data()
{
    uint8_t* p = p_.load(std::memory_order_acquire);
    if (p == nullptr) {
        void* m = mmap(nullptr, bytes_, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
        if (m == MAP_FAILED) {
            Raise("cannot map " + std::to_string(bytes_) + " bytes of emulated local memory");
        }
        uint8_t* fresh = static_cast<uint8_t*>(m);
        if (p_.compare_exchange_strong(p, fresh, std::memory_order_acq_rel)) {
            p = fresh;
        } else {
            munmap(fresh, bytes_);  // another core of the AI core mapped it first; p holds its mapping
        }
    }
    return p;
}

void CheckLocal(Buf b, uint64_t off, uint64_t bytes, const char* what)
{
    const int i = static_cast<int>(b);
    if (off + bytes > kCapacity[i]) {
        Raise(std::string(what) + ": " + BufName(b) + " bytes " + Range(off, off + bytes) + " exceed its capacity of " +
              std::to_string(kCapacity[i]) + " bytes on arch35");
    }
    if (off % kAlign[i] != 0) {
        Raise(std::string(what) + ": " + BufName(b) + " offset " + std::to_string(off) + " is not " +
              std::to_string(kAlign[i]) + "-byte aligned");
    }
}

void Touch(Buf b, uint64_t lo, uint64_t hi, Pipe p, bool write, const char* what)
{
    Core& c = Cur();
    auto& list = c.accesses[static_cast<int>(b)];
    for (const Core::Access& a : list) {
        if (a.pipe == p || a.hi <= lo || hi <= a.lo || (!a.write && !write)) {
            continue;
        }
        if (c.visible[Idx(p)][Idx(a.pipe)] < a.seq) {
            const char* kind = a.write ? (write ? "overwrites" : "reads") : "overwrites";
            const char* earlier = a.write ? "written" : "read";
            Raise(std::string(what) + ": pipe " + PipeName(p) + " " + kind + " " + BufName(b) + " " + Range(lo, hi) +
                  " that pipe " + PipeName(a.pipe) + " " + earlier + " (" + a.what + ") without signalling it first"
                  " (no SetFlag<" + PipeName(a.pipe) + "_" + PipeName(p) + ">/WaitFlag since)");
        }
    }
    const uint64_t s = ++c.seq[Idx(p)];
    /* Records the new access subsumes: on a write that passed, every record inside it; on a read, this pipe's own
     * older reads inside it. Visibility is transitive, so later checks against the new record imply the old ones. */
    list.erase(std::remove_if(list.begin(), list.end(),
                              [&](const Core::Access& a) {
                                  return lo <= a.lo && a.hi <= hi && (write || (a.pipe == p && !a.write));
                              }),
               list.end());
    list.push_back({static_cast<uint32_t>(lo), static_cast<uint32_t>(hi), p, s, write, what});
}

void UnitFlag(uint64_t lo, uint64_t hi, uint8_t unitFlag, bool write, const char* what)
{
    if (unitFlag == 1 || unitFlag > 3) {
        Raise(std::string(what) + ": unitFlag " + std::to_string(unitFlag) + " (0 off, 2 or 3 on; 1 is reserved: "
              "asc-devkit UnitFlag.md)");
    }
    Core& c = Cur();
    for (uint64_t block = lo / kUnitFlagBlock; block * kUnitFlagBlock < hi; ++block) {
        uint8_t& flag = c.unitFlags[block];
        const std::string at = BufName(Buf::L0C) + std::string(" block ") + Range(block * kUnitFlagBlock,
                                                                                 (block + 1) * kUnitFlagBlock);
        if (unitFlag == 0) {
            if (flag != 0) {
                Raise(std::string(what) + " with unitFlag 0 " + (write ? "overwrites " : "reads ") + at +
                      " that an Mmad with unitFlag 3 marked for a Fixpipe with unitFlag 2/3, which " +
                      (write ? "has not read it (its result is lost)" : "never comes: the flag stays set and the "
                       "next Mmad with unitFlag 2/3 there hangs") + " (asc-devkit UnitFlag.md / Mmad.md: Mmad and "
                      "Fixpipe must enable unitFlag together)");
            }
            continue;
        }
        if (flag != (write ? 0 : 1)) {
            Raise(std::string(what) + " with unitFlag " + std::to_string(unitFlag) + " waits until " + at + " is " +
                  (write ? "read by a Fixpipe with unitFlag 3" : "finished by an Mmad with unitFlag 3") +
                  ", and nothing before it on this core does that: the device hangs (asc-devkit UnitFlag.md)");
        }
        if (unitFlag == 3) {
            flag = write ? 1 : 0;
        }
    }
}

void CheckGm(const void* lo, const void* hi, const char* what)
{
    const auto a = reinterpret_cast<uintptr_t>(lo);
    const auto b = reinterpret_cast<uintptr_t>(hi);
    std::lock_guard<std::mutex> lock(g_gmMutex);
    auto it = g_gm.upper_bound(a);
    if (it != g_gm.begin()) {
        --it;
        if (it->first <= a && b <= it->first + it->second) {
            return;
        }
    }
    Raise(std::string(what) + ": GM bytes [" + Hex(a) + ", " + Hex(b) + ") are outside every tensor passed to the "
          "kernel (no device allocation holds them)");
}

void MapGm(const void* base, uint64_t bytes)
{
    std::lock_guard<std::mutex> lock(g_gmMutex);
    g_gm[reinterpret_cast<uintptr_t>(base)] = bytes;
}

void UnmapGm(const void* base)
{
    std::lock_guard<std::mutex> lock(g_gmMutex);
    const auto lo = reinterpret_cast<uintptr_t>(base);
    auto it = g_gm.find(lo);
    if (it == g_gm.end()) {
        return;
    }
    for (auto& core : g_dcache) {
        core.second.erase(core.second.lower_bound(lo), core.second.lower_bound(lo + it->second));
    }
    g_gm.erase(it);
}

void ScalarRead(const void* addr, void* out, uint32_t bytes, const char* what)
{
    CheckGm(addr, static_cast<const uint8_t*>(addr) + bytes, what);
    GmAccess(addr, 1, bytes, bytes, false, what);
    std::lock_guard<std::mutex> lock(g_gmMutex);
    auto& cache = g_dcache[CoreKey()];
    const auto a = reinterpret_cast<uintptr_t>(addr);
    for (uintptr_t w = a; w < a + bytes; w += 4) {
        uint32_t now;
        std::memcpy(&now, reinterpret_cast<const void*>(w), 4);
        auto hit = cache.find(w);
        if (hit == cache.end()) {
            cache[w] = now;
        } else if (hit->second != now) {
            Raise(std::string(what) + ": scalar read of GM " + Hex(w) + " hits this core's DCache copy (" +
                  std::to_string(hit->second) + ") but GM holds " + std::to_string(now) + " (written by another "
                  "core, a DMA or a memset since): the read needs DataCacheCleanAndInvalid first (asc-devkit "
                  "DataCacheCleanAndInvalid: data other cores may modify)");
        }
    }
    for (uint32_t i = 0; i < bytes; i += 4) {
        std::memcpy(static_cast<uint8_t*>(out) + i, &cache[a + i], bytes - i < 4 ? bytes - i : 4);
    }
}

void CacheInvalidate(const void* addr, bool entire)
{
    std::lock_guard<std::mutex> lock(g_gmMutex);
    auto& cache = g_dcache[CoreKey()];
    if (entire) {
        cache.clear();
        return;
    }
    const auto a = reinterpret_cast<uintptr_t>(addr);
    cache.erase(cache.lower_bound(a), cache.lower_bound((a / kCacheLine + 1) * kCacheLine));
}

void SetFlag(Pipe src, Pipe dst, int32_t id, const char* event)
{
    CheckEventId(id, "SetFlag", event);
    Core& c = Cur();
    Core::Pending& f = c.flags[Idx(src)][Idx(dst)][id];
    if (f.set) {
        Raise(std::string("SetFlag<") + event + ">(" + std::to_string(id) + ") while the flag is still set: the "
              "earlier signal was never waited for (unpaired SetFlag)");
    }
    Post(f, src);
}

void Post(Core::Pending& f, Pipe src)
{
    const Core& c = Cur();
    f.set = true;
    for (int q = 0; q < kPipes; ++q) {
        f.vis[q] = c.visible[Idx(src)][q];
    }
    f.vis[Idx(src)] = c.seq[Idx(src)];
    std::memcpy(f.xclk, c.xclk[Idx(src)], sizeof(f.xclk));
}

void Take(Core::Pending& f, Pipe dst)
{
    if (!f.set) {
        return;
    }
    Core& c = Cur();
    f.set = false;
    for (int q = 0; q < kPipes; ++q) {
        c.visible[Idx(dst)][q] = std::max(c.visible[Idx(dst)][q], f.vis[q]);
    }
    for (int g = 0; g < 3; ++g) {
        c.xclk[Idx(dst)][g] = std::max(c.xclk[Idx(dst)][g], f.xclk[g]);
    }
}

void WaitFlag(Pipe src, Pipe dst, int32_t id, const char* event)
{
    CheckEventId(id, "WaitFlag", event);
    Core& c = Cur();
    Core::Pending& f = c.flags[Idx(src)][Idx(dst)][id];
    if (!f.set) {
        Raise(std::string("WaitFlag<") + event + ">(" + std::to_string(id) + ") can never be satisfied: no "
              "SetFlag<" + event + ">(" + std::to_string(id) + ") is pending (the core would hang)");
    }
    Take(f, dst);
}

void Barrier(Pipe p)
{
    Core& c = Cur();
    if (p == Pipe::M) {
        c.mBarrierSeq = c.seq[Idx(Pipe::M)];
        return;
    }
    if (p == Pipe::COUNT) {  // PIPE_ALL: every pipe waits for every other
        uint32_t all[3] = {};
        for (int a = 0; a < kPipes; ++a) {
            for (int g = 0; g < 3; ++g) {
                all[g] = std::max(all[g], c.xclk[a][g]);
            }
        }
        for (int a = 0; a < kPipes; ++a) {
            for (int q = 0; q < kPipes; ++q) {
                c.visible[a][q] = c.seq[q];
            }
            std::memcpy(c.xclk[a], all, sizeof(all));
        }
        c.mBarrierSeq = c.seq[Idx(Pipe::M)];
    }
}

void RequireType(KernelType t, const char* what)
{
    const Core& c = Cur();
    if (c.type != t) {
        Raise(std::string(what) + " on " +
              (c.type == KernelType::AIC ? "a cube core (AIC)" : c.type == KernelType::AIV ? "a vector core (AIV)"
                                                                                          : "a core of a kernel without KERNEL_TASK_TYPE") +
              " of a kernel declared " + (c.mix ? "KERNEL_TYPE_MIX_*" : c.type == KernelType::AIC ? "KERNEL_TYPE_AIC_ONLY"
                                                                                                  : "KERNEL_TYPE_AIV_ONLY") +
              ": " + (t == KernelType::AIC ? "cube" : "vector") + " work needs the other core type");
    }
}

bool StreamFailed()
{
    std::lock_guard<std::mutex> lock(g_faultMutex);
    return !g_fault.empty();
}

void RecordFault(const char* kernel, uint32_t block, const std::string& what)
{
    RecordLaunchFault(std::string(kernel) + " block " + std::to_string(block) + ": " + what);
}

void RecordLaunchFault(const std::string& what)
{
    std::lock_guard<std::mutex> lock(g_faultMutex);
    if (g_fault.empty()) {
        g_fault = what;
    }
}

std::string TakeFault()
{
    std::lock_guard<std::mutex> lock(g_faultMutex);
    std::string f;
    f.swap(g_fault);
    return f;
}

}  // namespace ascend_cpu
