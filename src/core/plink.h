// PLINK 1 binary genotypes (.bed), SNP-major: after a three-byte header, each SNP takes
// ceil(n_samples / 4) bytes, four samples per byte from the low bits up, two bits each:
// 00 = homozygous for allele 1 (the .bim's fifth column), 10 = heterozygous, 11 = homozygous
// for allele 2, 01 = missing. We count copies of allele 1, as PLINK's --recode A does:
// 00 -> 2, 10 -> 1, 11 -> 0, 01 -> missing.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string_view>
#include <vector>

namespace fsgpu {

constexpr int8_t kMissingGenotype = -1;

// Bytes per SNP in a .bed file of n_samples samples.
inline int64_t bed_snp_bytes(int64_t n_samples) { return (n_samples + 3) / 4; }

// Throws std::runtime_error with a message for the user when a .bed file of `size` bytes
// starting with `head` (at least min(size, 3) bytes) cannot hold n_snps SNPs of n_samples
// samples in SNP-major order: wrong magic number, sample-major mode, or the wrong length.
void check_bed(const uint8_t* head, int64_t size, int64_t n_samples, int64_t n_snps);

// The allele-1 counts (0, 1, 2, or kMissingGenotype) of one SNP's n_samples samples.
void decode_bed_snp(const uint8_t* snp, int64_t n_samples, int8_t* out);

// The fields of a .bim or .fam text (size bytes), n_fields to a line, separated by spaces or tabs,
// appended to `fields` line by line (blank lines skipped). Returns false, for a general reader to
// take over with its own messages, when a line has another number of fields or the text has a
// byte other than printable ASCII, space, tab or newline (a carriage return, a compressed file).
bool split_plink_table(const char* text, size_t size, int n_fields, std::vector<std::string_view>& fields);

}  // namespace fsgpu
