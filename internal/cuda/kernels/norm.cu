// RMSNorm: y[b][i] = x[b][i] / sqrt(mean_i(x[b]^2) + eps) * w[i], as the
// CPU forward (and ggml) computes it: the f32 squares summed in double, the
// mean rounded to f32, the scale 1/sqrt in f32 (IEEE), applied to x before
// the gain. blockDim 256 (at most), grid n (one block per token). y may
// alias x.
extern "C" __global__ void rmsnorm(const float *x, const float *w, float *y, long long cols, float eps) {
    __shared__ double part[256];
    __shared__ float scale_of_row;
    const float *xb = x + (long long)blockIdx.x * cols;
    float *yb = y + (long long)blockIdx.x * cols;
    double s = 0.0;
    for (long long i = threadIdx.x; i < cols; i += blockDim.x) {
        float sq = xb[i] * xb[i];
        s += (double)sq;
    }
    part[threadIdx.x] = s;
    __syncthreads();
    if (threadIdx.x == 0) {
        double sum = 0.0;
        for (unsigned t = 0; t < blockDim.x; t++) sum += part[t];
        float mean = (float)(sum / (double)cols);
        scale_of_row = 1.0f / sqrtf(mean + eps);
    }
    __syncthreads();
    float scale = scale_of_row;
    for (long long i = threadIdx.x; i < cols; i += blockDim.x) {
        float v = xb[i] * scale;
        yb[i] = v * w[i];
    }
}
