#include "plink.h"

#include <algorithm>
#include <cstring>
#include <stdexcept>
#include <string>

namespace fsgpu {

void check_bed(const uint8_t* head, int64_t size, int64_t n_samples, int64_t n_snps) {
  if (size < 3 || head[0] != 0x6c || head[1] != 0x1b)
    throw std::runtime_error("not a PLINK 1 .bed file (its first two bytes are not 0x6c 0x1b)");
  if (head[2] != 0x01)
    throw std::runtime_error("the .bed file is in sample-major mode; convert it with plink --make-bed");
  const int64_t expected = 3 + bed_snp_bytes(n_samples) * n_snps;
  if (size != expected)
    throw std::runtime_error("the .bed file has " + std::to_string(size) + " bytes, but " +
                             std::to_string(n_samples) + " samples (.fam) and " + std::to_string(n_snps) +
                             " SNPs (.bim) need " + std::to_string(expected));
}

namespace {

constexpr int8_t kAllele1Count[4] = {2, kMissingGenotype, 1, 0};

// The four samples' counts of every byte value, so that a byte is decoded by one copy.
struct ByteCounts {
  int8_t counts[256][4];
  constexpr ByteCounts() : counts() {
    for (int b = 0; b < 256; ++b)
      for (int k = 0; k < 4; ++k) counts[b][k] = kAllele1Count[(b >> (2 * k)) & 3];
  }
};
constexpr ByteCounts kByteCounts;

}  // namespace

void decode_bed_snp(const uint8_t* snp, int64_t n_samples, int8_t* out) {
  const int64_t whole = n_samples / 4;
  for (int64_t i = 0; i < whole; ++i) std::memcpy(out + 4 * i, kByteCounts.counts[snp[i]], 4);
  for (int64_t s = 4 * whole; s < n_samples; ++s) out[s] = kAllele1Count[(snp[s >> 2] >> (2 * (s & 3))) & 3];
}

bool split_plink_table(const char* text, size_t size, int n_fields, std::vector<std::string_view>& fields) {
  fields.reserve(fields.size() + (std::count(text, text + size, '\n') + 1) * size_t(n_fields));
  size_t i = 0;
  while (i < size) {
    int on_line = 0;
    for (;;) {
      while (i < size && (text[i] == ' ' || text[i] == '\t')) ++i;
      if (i == size || text[i] == '\n') break;
      const size_t start = i;
      while (i < size && text[i] != ' ' && text[i] != '\t' && text[i] != '\n') {
        const unsigned char ch = static_cast<unsigned char>(text[i]);
        if (ch < 0x21 || ch > 0x7e) return false;
        ++i;
      }
      if (++on_line > n_fields) return false;
      fields.emplace_back(text + start, i - start);
    }
    if (on_line != 0 && on_line != n_fields) return false;
    ++i;  // the newline
  }
  return true;
}

}  // namespace fsgpu
