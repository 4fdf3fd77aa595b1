/* Attention for one query token a row against a KV cache, on the CPU.
 *
 * Built and loaded by worldagent/lm/decode_attention.py (see its doc for why). For each row b and
 * key/value head h, the G query heads that share h read the cache's columns once:
 *   pass 1: scores s[g][l] = scale * q[g] . k[l] for the columns the mask keeps,
 *   pass 2: p = exp(s - max), and their sum,
 *   pass 3: out[g] = sum_l p[g][l] * v[l] / sum.
 * Everything is accumulated in float32; a bfloat16 output is rounded to nearest even once.
 *
 * Layout: q and out are (B, KV*G, D) contiguous; k and v are addressed by element strides
 * (row, head, column), the D values of a column contiguous; mask is (B, L) bytes with a row stride,
 * or NULL (every column kept). A column whose mask byte is 0 adds nothing; a row with no column
 * kept gets zeros.
 */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#define MAX_GROUP 16
#define MAX_HEAD_DIM 256
#define MASKED (-1e30f) /* not -inf: built with -ffast-math, which assumes finite values */

static inline float bf16_to_f32(uint16_t v) {
    uint32_t u = (uint32_t)v << 16;
    float f;
    memcpy(&f, &u, 4);
    return f;
}

static inline uint16_t f32_to_bf16(float f) {
    uint32_t u;
    memcpy(&u, &f, 4);
    if ((u & 0x7fffffffu) > 0x7f800000u) return (uint16_t)((u >> 16) | 64); /* NaN stays NaN */
    u += 0x7fffu + ((u >> 16) & 1u);
    return (uint16_t)(u >> 16);
}

static inline int kept(const uint8_t *mask, long l) { return mask == NULL || mask[l] != 0; }

/* Where a row's loops start: its first kept column, rounded down to a multiple of 64 so that the
 * vectorised sums of the softmax keep their lanes (the columns skipped before it add exact zeros). */
static inline long first_column(const uint8_t *mask, long L) {
    long first = 0;
    if (mask != NULL)
        while (first < L && mask[first] == 0) first++;
    return first & ~63L;
}

/* Each column is asked for this many columns ahead (8, 16, 32 and 64 measured: 32 and 64 best): the
 * hardware's own prefetcher stops at every 4 KiB page, 32 columns of a bfloat16 head of 64. */
#define PREFETCH_COLUMNS 32
static inline void prefetch_column(const void *column, long bytes) {
    for (long at = 0; at < bytes; at += 64) __builtin_prefetch((const char *)column + at, 0, 3);
}

/* Passes 2 and 3 are shared by both precisions: scores (G rows of L) -> probabilities, in place. */
static void softmax_rows(float *scores, long first, long L, int G, float *sums) {
    for (int g = 0; g < G; g++) {
        float *row = scores + (long)g * L;
        float top = MASKED;
        for (long l = first; l < L; l++) top = row[l] > top ? row[l] : top;
        float sum = 0.f;
        if (top > MASKED) {
            for (long l = first; l < L; l++) {
                float p = expf(row[l] - top);
                row[l] = p;
                sum += p;
            }
        } else {
            memset(row + first, 0, sizeof(float) * (L - first));
        }
        sums[g] = sum;
    }
}


/* The head size is a constant in each inlined copy (64, 128, 256, or any other), so that the loops
 * over it vectorise and unroll. */
#define INLINE static inline __attribute__((always_inline))

/* Passes 2 and 3, and the output: probabilities (G rows of L) times the value columns. */
#define WEIGHTED_VALUES(T, TO_F32, STORE)                                                                  \
    float sums[MAX_GROUP];                                                                                 \
    softmax_rows(scores, first, L, G, sums);                                                               \
    float acc[MAX_GROUP][MAX_HEAD_DIM];                                                                    \
    for (int g = 0; g < G; g++) memset(acc[g], 0, sizeof(float) * D);                                     \
    float column[MAX_HEAD_DIM];                                                                            \
    for (long l = first; l < L; l++) {                                                                     \
        if (!kept(mask, l)) continue;                                                                      \
        const T *row = v + l * vsl;                                                                        \
        prefetch_column(row + PREFETCH_COLUMNS * vsl, (long)sizeof(T) * D);                                \
        for (int d = 0; d < D; d++) column[d] = TO_F32(row[d]);                                            \
        for (int g = 0; g < G; g++) {                                                                      \
            const float p = scores[(long)g * L + l];                                                       \
            for (int d = 0; d < D; d++) acc[g][d] += p * column[d];                                        \
        }                                                                                                  \
    }                                                                                                      \
    for (int g = 0; g < G; g++) {                                                                          \
        const float norm = sums[g] > 0.f ? 1.f / sums[g] : 0.f;                                            \
        for (int d = 0; d < D; d++) out[(long)g * D + d] = STORE(acc[g][d] * norm);                        \
    }

/* Pass 1: the query (scaled) and each key column converted to float32 once. */
#define SCORES(T, TO_F32)                                                                            \
    {                                                                                                      \
        float query[MAX_GROUP][MAX_HEAD_DIM], column[MAX_HEAD_DIM];                                        \
        for (int g = 0; g < G; g++)                                                                        \
            for (int d = 0; d < D; d++) query[g][d] = TO_F32(q[(long)g * D + d]) * scale;                  \
        for (long l = first; l < L; l++) {                                                                 \
            if (!kept(mask, l)) {                                                                          \
                for (int g = 0; g < G; g++) scores[(long)g * L + l] = MASKED;                              \
                continue;                                                                                  \
            }                                                                                              \
            const T *row = k + l * ksl;                                                                    \
            prefetch_column(row + PREFETCH_COLUMNS * ksl, (long)sizeof(T) * D);                            \
            for (int d = 0; d < D; d++) column[d] = TO_F32(row[d]);                                        \
            for (int g = 0; g < G; g++) {                                                                  \
                float dot = 0.f;                                                                           \
                for (int d = 0; d < D; d++) dot += query[g][d] * column[d];                                \
                scores[(long)g * L + l] = dot;                                                             \
            }                                                                                              \
        }                                                                                                  \
    }

static inline float same(float x) { return x; }

INLINE void head_bf16(const uint16_t *q, const uint16_t *k, const uint16_t *v, long ksl, long vsl,
                      const uint8_t *mask, long L, int G, const int D, float scale, uint16_t *out, float *scores) {
    const long first = first_column(mask, L);
    SCORES(uint16_t, bf16_to_f32)
    WEIGHTED_VALUES(uint16_t, bf16_to_f32, f32_to_bf16)
}

INLINE void head_f32(const float *q, const float *k, const float *v, long ksl, long vsl, const uint8_t *mask,
                     long L, int G, const int D, float scale, float *out, float *scores) {
    const long first = first_column(mask, L);
    SCORES(float, same)
    WEIGHTED_VALUES(float, same, same)
}

#define BY_HEAD_SIZE(NAME, IMPL, T)                                                                        \
    static void NAME(const T *q, const T *k, const T *v, long ksl, long vsl, const uint8_t *mask, long L,  \
                     int G, int D, float scale, T *out, float *scores) {                                   \
        switch (D) {                                                                                       \
        case 64: IMPL(q, k, v, ksl, vsl, mask, L, G, 64, scale, out, scores); break;                       \
        case 128: IMPL(q, k, v, ksl, vsl, mask, L, G, 128, scale, out, scores); break;                     \
        case 256: IMPL(q, k, v, ksl, vsl, mask, L, G, 256, scale, out, scores); break;                     \
        default: IMPL(q, k, v, ksl, vsl, mask, L, G, D, scale, out, scores);                               \
        }                                                                                                  \
    }

BY_HEAD_SIZE(one_head_bf16, head_bf16, uint16_t)
BY_HEAD_SIZE(one_head_f32, head_f32, float)

void decode_attention_limits(int *max_group, int *max_head_dim) {
    *max_group = MAX_GROUP;
    *max_head_dim = MAX_HEAD_DIM;
}

/* Returns 0, or -1 when the scratch memory could not be had (out is then unwritten). */
#define DECODE_ATTENTION(NAME, T, ONE_HEAD)                                                                       \
    int NAME(const T *q, const T *k, const T *v, long ksb, long ksh, long ksl, long vsb, long vsh, long vsl,     \
             const uint8_t *mask, long msb, int B, int KV, int G, int D, long L, float scale, T *out, int threads) { \
        int failed = 0;                                                                                          \
        _Pragma("omp parallel num_threads(threads) reduction(| : failed)") {                                     \
            float *scores = malloc(sizeof(float) * (size_t)(L > 0 ? L : 1) * (size_t)G);                         \
            failed = scores == NULL;                                                                             \
            _Pragma("omp for schedule(static)") for (int i = 0; i < B * KV; i++) {                               \
                if (scores == NULL) continue;                                                                    \
                const int b = i / KV, h = i % KV;                                                                \
                ONE_HEAD(q + (long)i * G * D, k + b * ksb + h * ksh, v + b * vsb + h * vsh, ksl, vsl,            \
                         mask ? mask + b * msb : NULL, L, G, D, scale, out + (long)i * G * D, scores);           \
            }                                                                                                    \
            free(scores);                                                                                        \
        }                                                                                                        \
        return failed ? -1 : 0;                                                                                  \
    }

DECODE_ATTENTION(decode_attention_bf16, uint16_t, one_head_bf16)
DECODE_ATTENTION(decode_attention_f32, float, one_head_f32)

/* Rows that share their first columns: the samples of one prompt (the same prompt's keys and values
 * at the same columns of each row's cache). The kernel above reads those columns once a row; here a
 * group's rows read them once for all of them, then each row its own columns after them. Every query
 * still sums over its columns in the same order, with the same per-column arithmetic, as above.
 *
 * rows lists the batch's rows group by group, starts[g] where group g begins (starts[groups] = B);
 * shared[g] how many leading columns the rows of group g share (read from its first row, rows[starts[g]];
 * their mask bytes there must be the same too). A group with more rows than MAX_SHARED_QUERIES / G is
 * taken in chunks, each reading the shared columns once. */
#define MAX_SHARED_QUERIES 64

void decode_attention_shared_limits(int *max_queries) { *max_queries = MAX_SHARED_QUERIES; }

/* The first column any of the n rows keeps, rounded down as first_column does. */
static inline long group_first_column(const uint8_t *mask, long msb, const int *rows, int n, long L) {
    long first = L;
    for (int i = 0; i < n; i++) {
        long own = first_column(mask ? mask + rows[i] * msb : NULL, L);
        first = own < first ? own : first;
    }
    return first;
}

#define GROUP_HEAD(NAME, T, TO_F32, STORE)                                                                 \
    INLINE void NAME(const T *q, long qsr, const T *k, long ksb, long ksl, const T *v, long vsb, long vsl,   \
                     const uint8_t *mask, long msb, int lead, const int *rows, int n, long shared, long L,    \
                     int G, const int D, float scale, T *out, float *scores) {                               \
        const int NQ = n * G;                                                                                \
        const long first = group_first_column(mask, msb, rows, n, L);                                        \
        const long split = shared < first ? first : (shared > L ? L : shared);                               \
        const uint8_t *lead_mask = mask ? mask + lead * msb : NULL;                                          \
        const T *lead_k = k + lead * ksb, *lead_v = v + lead * vsb;                                          \
        float query[MAX_SHARED_QUERIES][MAX_HEAD_DIM], column[MAX_HEAD_DIM];                                 \
        for (int i = 0; i < n; i++)                                                                          \
            for (int g = 0; g < G; g++)                                                                      \
                for (int d = 0; d < D; d++) query[i * G + g][d] = TO_F32(q[rows[i] * qsr + (long)g * D + d]) * scale; \
        /* pass 1: the shared columns once, then each row's own */                                         \
        for (long l = first; l < split; l++) {                                                               \
            if (!kept(lead_mask, l)) {                                                                       \
                for (int j = 0; j < NQ; j++) scores[(long)j * L + l] = MASKED;                               \
                continue;                                                                                    \
            }                                                                                                \
            const T *row = lead_k + l * ksl;                                                                 \
            prefetch_column(row + PREFETCH_COLUMNS * ksl, (long)sizeof(T) * D);                              \
            for (int d = 0; d < D; d++) column[d] = TO_F32(row[d]);                                          \
            for (int j = 0; j < NQ; j++) {                                                                   \
                float dot = 0.f;                                                                             \
                for (int d = 0; d < D; d++) dot += query[j][d] * column[d];                                  \
                scores[(long)j * L + l] = dot;                                                               \
            }                                                                                                \
        }                                                                                                    \
        for (int i = 0; i < n; i++) {                                                                        \
            const uint8_t *own_mask = mask ? mask + rows[i] * msb : NULL;                                    \
            const T *own_k = k + rows[i] * ksb;                                                              \
            for (long l = split; l < L; l++) {                                                               \
                if (!kept(own_mask, l)) {                                                                    \
                    for (int g = 0; g < G; g++) scores[(long)(i * G + g) * L + l] = MASKED;                  \
                    continue;                                                                                \
                }                                                                                            \
                const T *row = own_k + l * ksl;                                                              \
                for (int d = 0; d < D; d++) column[d] = TO_F32(row[d]);                                      \
                for (int g = 0; g < G; g++) {                                                                \
                    float dot = 0.f;                                                                         \
                    for (int d = 0; d < D; d++) dot += query[i * G + g][d] * column[d];                      \
                    scores[(long)(i * G + g) * L + l] = dot;                                                 \
                }                                                                                            \
            }                                                                                                \
        }                                                                                                    \
        /* passes 2 and 3: the shared values once, then each row's own */                                  \
        float sums[MAX_SHARED_QUERIES];                                                                      \
        softmax_rows(scores, first, L, NQ, sums);                                                            \
        float acc[MAX_SHARED_QUERIES][MAX_HEAD_DIM];                                                         \
        for (int j = 0; j < NQ; j++) memset(acc[j], 0, sizeof(float) * D);                                  \
        for (long l = first; l < split; l++) {                                                               \
            if (!kept(lead_mask, l)) continue;                                                               \
            const T *row = lead_v + l * vsl;                                                                 \
            prefetch_column(row + PREFETCH_COLUMNS * vsl, (long)sizeof(T) * D);                              \
            for (int d = 0; d < D; d++) column[d] = TO_F32(row[d]);                                          \
            for (int j = 0; j < NQ; j++) {                                                                   \
                const float p = scores[(long)j * L + l];                                                     \
                for (int d = 0; d < D; d++) acc[j][d] += p * column[d];                                      \
            }                                                                                                \
        }                                                                                                    \
        for (int i = 0; i < n; i++) {                                                                        \
            const uint8_t *own_mask = mask ? mask + rows[i] * msb : NULL;                                    \
            const T *own_v = v + rows[i] * vsb;                                                              \
            for (long l = split; l < L; l++) {                                                               \
                if (!kept(own_mask, l)) continue;                                                            \
                const T *row = own_v + l * vsl;                                                              \
                for (int d = 0; d < D; d++) column[d] = TO_F32(row[d]);                                      \
                for (int g = 0; g < G; g++) {                                                                \
                    const float p = scores[(long)(i * G + g) * L + l];                                       \
                    for (int d = 0; d < D; d++) acc[i * G + g][d] += p * column[d];                          \
                }                                                                                            \
            }                                                                                                \
        }                                                                                                    \
        for (int i = 0; i < n; i++)                                                                          \
            for (int g = 0; g < G; g++) {                                                                    \
                const int j = i * G + g;                                                                     \
                const float norm = sums[j] > 0.f ? 1.f / sums[j] : 0.f;                                      \
                for (int d = 0; d < D; d++) out[rows[i] * qsr + (long)g * D + d] = STORE(acc[j][d] * norm);  \
            }                                                                                                \
    }

GROUP_HEAD(group_head_bf16, uint16_t, bf16_to_f32, f32_to_bf16)
GROUP_HEAD(group_head_f32, float, same, same)

#define GROUP_BY_HEAD_SIZE(NAME, IMPL, T)                                                                  \
    static void NAME(const T *q, long qsr, const T *k, long ksb, long ksl, const T *v, long vsb, long vsl,   \
                     const uint8_t *mask, long msb, int lead, const int *rows, int n, long shared, long L, int G, \
                     int D, float scale, T *out, float *scores) {                                            \
        switch (D) {                                                                                         \
        case 64: IMPL(q, qsr, k, ksb, ksl, v, vsb, vsl, mask, msb, lead, rows, n, shared, L, G, 64, scale, out, scores); break; \
        case 128: IMPL(q, qsr, k, ksb, ksl, v, vsb, vsl, mask, msb, lead, rows, n, shared, L, G, 128, scale, out, scores); break; \
        case 256: IMPL(q, qsr, k, ksb, ksl, v, vsb, vsl, mask, msb, lead, rows, n, shared, L, G, 256, scale, out, scores); break; \
        default: IMPL(q, qsr, k, ksb, ksl, v, vsb, vsl, mask, msb, lead, rows, n, shared, L, G, D, scale, out, scores); \
        }                                                                                                    \
    }

GROUP_BY_HEAD_SIZE(one_group_bf16, group_head_bf16, uint16_t)
GROUP_BY_HEAD_SIZE(one_group_f32, group_head_f32, float)

/* The plain kernel's arguments, then the groups. Returns 0, -1 when the scratch memory could not be
 * had, -2 when G > MAX_SHARED_QUERIES or the groups do not hold the B rows (out is then unwritten). Work items are (group, head) pairs; a group is taken MAX_SHARED_QUERIES / G rows at a time. */
#define DECODE_ATTENTION_SHARED(NAME, T, ONE_GROUP)                                                              \
    int NAME(const T *q, const T *k, const T *v, long ksb, long ksh, long ksl, long vsb, long vsh, long vsl,     \
             const uint8_t *mask, long msb, int B, int KV, int G, int D, long L, float scale, T *out,            \
             int threads, const int *rows, const int *starts, int groups, const long *shared) {                  \
        if (G > MAX_SHARED_QUERIES || starts[groups] != B) return -2;                                            \
        const int chunk = MAX_SHARED_QUERIES / G;                                                                \
        const long qsr = (long)KV * G * D;                                                                       \
        int failed = 0;                                                                                          \
        _Pragma("omp parallel num_threads(threads) reduction(| : failed)") {                                     \
            float *scores = malloc(sizeof(float) * (size_t)(L > 0 ? L : 1) * (size_t)(chunk * G));               \
            failed = scores == NULL;                                                                             \
            _Pragma("omp for schedule(dynamic)") for (int i = 0; i < groups * KV; i++) {                         \
                if (scores == NULL) continue;                                                                    \
                const int g = i / KV, h = i % KV;                                                                \
                for (int at = starts[g]; at < starts[g + 1]; at += chunk) {                                      \
                    const int n = starts[g + 1] - at < chunk ? starts[g + 1] - at : chunk;                       \
                    ONE_GROUP(q + (long)h * G * D, qsr, k + h * ksh, ksb, ksl, v + h * vsh, vsb, vsl, mask, msb, \
                              rows[starts[g]], rows + at, n, shared[g], L, G, D, scale, out + (long)h * G * D,   \
                              scores);                                                                           \
                }                                                                                                \
            }                                                                                                    \
            free(scores);                                                                                        \
        }                                                                                                        \
        return failed ? -1 : 0;                                                                                  \
    }

DECODE_ATTENTION_SHARED(decode_attention_shared_bf16, uint16_t, one_group_bf16)
DECODE_ATTENTION_SHARED(decode_attention_shared_f32, float, one_group_f32)
