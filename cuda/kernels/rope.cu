// Rotary position embeddings, in place, for the n rows of a pass. x is
// [n][heads*head_dim]; row b is at position rows[4b+2] (the pass's row
// table: see attention.cu), so the rows of one launch may belong to
// different sequences. Pair p of a head (0 <= p < head_dim/2) turns by
// pos * theta_scale^p / factors[p] * freq_scale. rope_norm pairs (2p,
// 2p+1) (llama); rope_neox pairs (p, p+head_dim/2) (qwen2). factors may be
// null. blockDim head_dim/2, grid (heads, n).

// rope_angle: the angle of pair p, computed as the CPU forward (and ggml)
// does, by repeated f32 multiplication by theta_scale rather than a power,
// so that the angles round alike.
__device__ __forceinline__ void rope_angle(long long pos, int p, float theta_scale, float freq_scale,
                                           const float *factors, float *c, float *s) {
    float t = (float)pos;
    for (int i = 0; i < p; i++) t *= theta_scale;
    if (factors) t = t / factors[p];
    t = freq_scale * t;
    sincosf(t, s, c);
}

extern "C" __global__ void rope_norm(float *x, long long heads, long long head_dim, const long long *rows,
                                     float theta_scale, float freq_scale, const float *factors) {
    int p = threadIdx.x, h = blockIdx.x, b = blockIdx.y;
    float c, s;
    rope_angle(rows[4 * b + 2], p, theta_scale, freq_scale, factors, &c, &s);
    float *head = x + ((long long)b * heads + h) * head_dim;
    float x0 = head[2 * p], x1 = head[2 * p + 1];
    head[2 * p] = x0 * c - x1 * s;
    head[2 * p + 1] = x0 * s + x1 * c;
}

extern "C" __global__ void rope_neox(float *x, long long heads, long long head_dim, const long long *rows,
                                     float theta_scale, float freq_scale, const float *factors) {
    int p = threadIdx.x, h = blockIdx.x, b = blockIdx.y;
    float c, s;
    rope_angle(rows[4 * b + 2], p, theta_scale, freq_scale, factors, &c, &s);
    float *head = x + ((long long)b * heads + h) * head_dim;
    long long half = head_dim / 2;
    float x0 = head[p], x1 = head[p + half];
    head[p] = x0 * c - x1 * s;
    head[p + half] = x0 * s + x1 * c;
}
