// Rotary position embeddings, in place, for the n rows of a pass. x is
// [n][heads*head_dim]; row b is at position rows[4b+2] (the pass's row
// table: see attention.cu), so the rows of one launch may belong to
// different sequences. The first dims values of each head are rotated, the
// rest left as they are. Pair p (0 <= p < dims/2) turns by the angle of
// rope_angle. rope_norm pairs (2p, 2p+1) (llama); rope_neox pairs (p,
// p+dims/2) (qwen2). factors may be null. blockDim dims/2 rounded up to a whole warp (the
// threads past dims/2 do nothing), grid (heads, n).

// rope_angle: cos and sin of pair p's angle at pos, times mscale, as the
// CPU forward (and ggml's rope_yarn) computes them: theta = pos *
// theta_scale^p by repeated f32 multiplication rather than a power (so
// that the angles round alike), divided by factors[p]; the angle is
// freq_scale * theta, and with yarn (nonzero) it is mixed with theta by
// YaRN's ramp between the correction dims corr0 and corr1.
__device__ __forceinline__ void rope_angle(long long pos, int p, float theta_scale, float freq_scale,
                                           const float *factors, float mscale, long long yarn, float corr0,
                                           float corr1, float *c, float *s) {
    float theta = (float)pos;
    for (int i = 0; i < p; i++) theta *= theta_scale;
    if (factors) theta = theta / factors[p];
    float t = freq_scale * theta;
    if (yarn) {
        float y = ((float)p - corr0) / fmaxf(0.001f, corr1 - corr0);
        float mix = 1.0f - fminf(1.0f, fmaxf(0.0f, y));
        float ext = theta * mix;
        t = fmaf(t, 1.0f - mix, ext);
    }
    float sn, cs;
    sincosf(t, &sn, &cs);
    *c = cs * mscale;
    *s = sn * mscale;
}

// rotate turns the pair (a, b) of head by (c, s), rounding as the CPU
// forward does (the x1 product rounded, the x0 product fused into the sum).
__device__ __forceinline__ void rotate(float *head, long long a, long long b, float c, float s) {
    float x0 = head[a], x1 = head[b];
    float x1s = x1 * s, x1c = x1 * c;
    head[a] = fmaf(x0, c, -x1s);
    head[b] = fmaf(x0, s, x1c);
}

extern "C" __global__ void rope_norm(float *x, long long heads, long long head_dim, const long long *rows,
                                     long long dims, float theta_scale, float freq_scale, const float *factors,
                                     float mscale, long long yarn, float corr0, float corr1) {
    int p = threadIdx.x, h = blockIdx.x, b = blockIdx.y;
    if (p >= dims / 2) return;
    float c, s;
    rope_angle(rows[4 * b + 2], p, theta_scale, freq_scale, factors, mscale, yarn, corr0, corr1, &c, &s);
    rotate(x + ((long long)b * heads + h) * head_dim, 2 * p, 2 * p + 1, c, s);
}

extern "C" __global__ void rope_neox(float *x, long long heads, long long head_dim, const long long *rows,
                                     long long dims, float theta_scale, float freq_scale, const float *factors,
                                     float mscale, long long yarn, float corr0, float corr1) {
    int p = threadIdx.x, h = blockIdx.x, b = blockIdx.y;
    if (p >= dims / 2) return;
    float c, s;
    rope_angle(rows[4 * b + 2], p, theta_scale, freq_scale, factors, mscale, yarn, corr0, corr1, &c, &s);
    rotate(x + ((long long)b * heads + h) * head_dim, p, p + dims / 2, c, s);
}
