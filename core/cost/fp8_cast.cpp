#include "core/cost/fp8_cast.h"

namespace meshwork::cost {

double fp8_extra_cast_bytes_per_element(Fp8Recipe recipe) {
    // roofline_utils.py:176-211 less :146-175 (fp8_cast.h): 10n − 8n for the weight,
    // 8n − 6n for the input and the output gradient.
    return recipe == Fp8Recipe::Rowwise ? 2.0 : 0.0;
}

double fp8_extra_cast_bytes(const GemmShape& g, Fp8Recipe recipe) {
    if (!g.present()) return 0;
    const double elements = (g.m * g.k + g.k * g.n + g.m * g.n) * g.count;
    return fp8_extra_cast_bytes_per_element(recipe) * elements;
}

}  // namespace meshwork::cost
