// The memory latency ladder (seed 000: "Access latency to a bit in DRAM is relatively slow"): one thread follows a
// chain of dependent loads (i = next[i]), so each load waits for the one before it and the time per load is the
// latency of the level of the hierarchy that holds the chain.

// chase_l1: loads cached in L1 and L2 (ld.global.ca)
extern "C" __global__ void chase_l1(unsigned int* __restrict__ out, const unsigned int* __restrict__ next, int steps) {
    unsigned int i = 0;
    for (int s = 0; s < steps; ++s) i = __ldca(next + i);
    *out = i;
}

// chase_l2: loads cached in L2 only (ld.global.cg): a chain that fits L1 still pays the trip to L2
extern "C" __global__ void chase_l2(unsigned int* __restrict__ out, const unsigned int* __restrict__ next, int steps) {
    unsigned int i = 0;
    for (int s = 0; s < steps; ++s) i = __ldcg(next + i);
    *out = i;
}
