// Which codes the interaction search sees for each variable: real variables are the columns of
// the data; contrast variable j (index n_real + j) is column contrast_source[j] with its objects
// permuted, discretized with draws of its own index (MDFS's contrast variables).
//
// mdfs_discretize() depends on a column only through the sorted multiset of its values and each
// value's comparisons with the thresholds, so discretizing a permuted column gives the permuted
// codes of the unpermuted one (same draws). Hence a block of columns yields the codes of its real
// variables and of every contrast variable drawn from it: a data set too large to hold as
// doubles is coded block by block into compact codes that the engines take as they are.
#pragma once

#include <cstdint>
#include <vector>

#include "interactions.h"  // VariableCodes

namespace fsgpu {

struct InteractionCoding {
  std::vector<int32_t> rows;             // the objects searched: 0-based rows of the columns
  int64_t n_real = 0;
  std::vector<int32_t> contrast_source;  // contrast variable j's column, 0-based
  uint32_t contrast_seed = 0;
  int32_t divisions = 1;                 // MDFS draws (numeric columns only)
  double range = 0;
  uint32_t seed = 0;

  int32_t n_objects() const { return static_cast<int32_t>(rows.size()); }
  int64_t n_vars() const { return n_real + static_cast<int64_t>(contrast_source.size()); }
  int64_t column_of(int64_t var) const { return var < n_real ? var : contrast_source[var - n_real]; }

  // Contrast variable j's permutation: its object s has object order[s]'s value. Drawn from
  // contrast_seed and j alone, so it depends on no thread or block.
  void contrast_order(int64_t j, std::vector<int32_t>& order) const;

  // Codes (n_objects, -1 = missing) of variable var in discretization d, from its column's values
  // (NaN = missing; indexed by rows). scratch: reused between calls.
  void numeric_codes(int64_t var, int32_t d, const double* column, std::vector<double>& scratch,
                     int8_t* out) const;
};

// The variables whose column is in [first, first + n_columns): those columns' real variables,
// then the contrast variables drawn from them, ascending.
std::vector<int64_t> variables_of_columns(const InteractionCoding& coding, int64_t first, int64_t n_columns);

// The codes of `vars` (variables_of_columns(coding, first, n_columns)) in every discretization,
// from the values of those columns (column first + i at values + i * n_rows):
// codes[(d * vars.size() + i) * n_objects + s].
void interaction_block_codes(const InteractionCoding& coding, const double* values, int64_t n_rows, int64_t first,
                             const std::vector<int64_t>& vars, int32_t discretizations, int8_t* codes, int threads);

// The engines' view of precomputed codes [discretization][variable][object] (as
// interaction_block_codes() writes them for all variables): discretization d's codes.
VariableCodes stored_interaction_codes(const int8_t* codes, int32_t n_objects, int64_t n_vars, int32_t d);

}  // namespace fsgpu
