// The memory latency ladder (seed 000: "Access latency to a bit in DRAM is relatively slow"): one thread follows a
// chain of dependent loads (i = next[i]) from *start, so each load waits for the one before it and the time per load
// is the latency of the level of the hierarchy that holds the chain. *out: where it stopped (start == out continues
// the chain from one launch to the next, so a chain larger than L2 keeps reaching lines not loaded lately).

// chase_l1: loads cached in L1 and L2 (ld.global.ca)
extern "C" __global__ void chase_l1(unsigned int* out, const unsigned int* __restrict__ next, const unsigned int* start,
                                    int steps) {
    unsigned int i = *start;
    for (int s = 0; s < steps; ++s) i = __ldca(next + i);
    *out = i;
}

// chase_l2: loads cached in L2 only (ld.global.cg): a chain that fits L1 still pays the trip to L2
extern "C" __global__ void chase_l2(unsigned int* out, const unsigned int* __restrict__ next, const unsigned int* start,
                                    int steps) {
    unsigned int i = *start;
    for (int s = 0; s < steps; ++s) i = __ldcg(next + i);
    *out = i;
}
