// The baseline fsgpu's CPU engine is measured against: FEAST's JMI, single-threaded, written
// the way FEAST 2 / MIToolbox 3 compute it (Brown et al., JMLR 2012; github.com/Craigacp/FEAST).
//
//   feast_jmi <codes.bin> <n_samples> <n_features> <labels.bin> <k> [tie_tolerance]
//
// codes.bin: uint8 codes, column-major (feature after feature, n_samples bytes each).
// labels.bin: uint8 class codes, n_samples bytes.
// Prints one line:
//   selected=<0-based indices, comma separated> seconds=<selection loop> first_seconds=<the
//   I(X;Y) pass and first argmax> scores=<bits, comma separated>
//
// Per candidate and step this does what FEAST does: mergeArrays (maxState of both vectors, a
// cleared stateMap of Lx*Ls ints, joint states renumbered in order of first appearance), then
// calculateMutualInformation (maxState of both vectors, cleared count arrays, counts turned
// into double probabilities, and sum over every joint cell of p * log(p / px / py) where all
// three are nonzero, divided by log 2). The one liberty: buffers are allocated once and
// cleared, where FEAST calloc()s and free()s them on every call, so this baseline is, if
// anything, faster than FEAST itself. FEAST caches I(X_j, S_x; Y) in a k x features matrix and
// re-adds the cached terms each step; keeping one running sum per candidate adds the same
// numbers in the same order, so the scores are the same doubles.
//
// Semantics kept from FEAST on purpose: strict > in the argmax (ties to the lowest index of the
// floating-point maximum), scores start at 0.0 and feature 0 is taken when no candidate scores
// above 0 (FEAST's repeat-feature-0 behaviour; fsgpu stops early instead).
//
// tie_tolerance (default 0, FEAST exactly): a candidate replaces the best so far only when it
// scores above best * (1 + tie_tolerance). Mathematically equal scores summed in different
// orders differ in their last bits, so FEAST does not always give ties to the lowest index;
// with a tolerance of about 1e-10 it does, as fsgpu (exact integer arithmetic) does, and the
// two selections can be compared feature for feature. The cost per candidate is unchanged.

#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <iterator>
#include <stdexcept>
#include <string>
#include <vector>

namespace {

// Reusable buffers for merge_arrays and mutual_information.
struct Scratch {
  std::vector<int> state_map;
  std::vector<unsigned> merged;
  std::vector<int> first_counts, second_counts, joint_counts;
  std::vector<double> first_probs, second_probs, joint_probs;
};

// MIToolbox maxState: the number of states, max + 1.
template <class T>
int max_state(const T* v, int n) {
  int max = 0;
  for (int i = 0; i < n; i++) {
    if (static_cast<int>(v[i]) > max) max = static_cast<int>(v[i]);
  }
  return max + 1;
}

// MIToolbox mergeArrays: the joint variable of two vectors, states numbered 1.. in order of
// first appearance. Returns the number of states plus one (as MIToolbox does).
int merge_arrays(const uint8_t* first, const uint8_t* second, unsigned* out, int n, Scratch& s) {
  const int first_states = max_state(first, n);
  const int second_states = max_state(second, n);
  s.state_map.assign(static_cast<size_t>(first_states) * second_states, 0);
  int state_count = 1;
  for (int i = 0; i < n; i++) {
    const int cur = first[i] + second[i] * first_states;
    if (s.state_map[cur] == 0) {
      s.state_map[cur] = state_count;
      state_count++;
    }
    out[i] = static_cast<unsigned>(s.state_map[cur]);
  }
  return state_count;
}

// MIToolbox calculateJointProbability + calculateMutualInformation, in bits.
template <class T>
double mutual_information(const T* first, const uint8_t* second, int n, Scratch& s) {
  const int first_states = max_state(first, n);
  const int second_states = max_state(second, n);
  const int joint_states = first_states * second_states;
  s.first_counts.assign(first_states, 0);
  s.second_counts.assign(second_states, 0);
  s.joint_counts.assign(joint_states, 0);
  s.first_probs.assign(first_states, 0.0);
  s.second_probs.assign(second_states, 0.0);
  s.joint_probs.assign(joint_states, 0.0);
  for (int i = 0; i < n; i++) {
    s.first_counts[first[i]] += 1;
    s.second_counts[second[i]] += 1;
    s.joint_counts[second[i] * first_states + first[i]] += 1;
  }
  const double length = n;
  for (int i = 0; i < first_states; i++) s.first_probs[i] = s.first_counts[i] / length;
  for (int i = 0; i < second_states; i++) s.second_probs[i] = s.second_counts[i] / length;
  for (int i = 0; i < joint_states; i++) s.joint_probs[i] = s.joint_counts[i] / length;

  double mi = 0.0;
  for (int i = 0; i < joint_states; i++) {
    const int first_index = i % first_states;
    const int second_index = i / first_states;
    const double pj = s.joint_probs[i];
    const double p1 = s.first_probs[first_index];
    const double p2 = s.second_probs[second_index];
    if (pj > 0 && p1 > 0 && p2 > 0) mi += pj * std::log(pj / p1 / p2);
  }
  return mi / std::log(2.0);
}

std::vector<uint8_t> read_bytes(const char* path, size_t expected) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw std::runtime_error(std::string("cannot open ") + path);
  std::vector<uint8_t> bytes(expected);
  in.read(reinterpret_cast<char*>(bytes.data()), static_cast<std::streamsize>(expected));
  if (static_cast<size_t>(in.gcount()) != expected || in.peek() != EOF) {
    throw std::runtime_error(std::string(path) + " does not hold exactly " + std::to_string(expected) +
                             " bytes");
  }
  return bytes;
}

long parse_positive(const char* text, const char* what) {
  char* end = nullptr;
  const long value = std::strtol(text, &end, 10);
  if (end == text || *end != '\0' || value < 1) {
    throw std::runtime_error(std::string(what) + " must be a positive integer, not '" + text + "'");
  }
  return value;
}

double parse_tolerance(const char* text) {
  char* end = nullptr;
  const double value = std::strtod(text, &end);
  if (end == text || *end != '\0' || !(value >= 0 && value < 1)) {
    throw std::runtime_error(std::string("tie_tolerance must be in [0, 1), not '") + text + "'");
  }
  return value;
}

}  // namespace

int main(int argc, char** argv) {
  try {
    if (argc != 6 && argc != 7) {
      std::fprintf(stderr,
                   "usage: feast_jmi <codes.bin> <n_samples> <n_features> <labels.bin> <k> [tie_tolerance]\n");
      return 2;
    }
    const long n_samples = parse_positive(argv[2], "n_samples");
    const long n_features = parse_positive(argv[3], "n_features");
    const long k = parse_positive(argv[5], "k");
    const double tolerance = argc == 7 ? parse_tolerance(argv[6]) : 0.0;
    const double above = 1.0 + tolerance;  // best * above: the score a candidate must beat
    if (k > n_features) throw std::runtime_error("k must not exceed n_features");
    if (n_samples > 100000000L) throw std::runtime_error("n_samples too large for int indexing");
    const int n = static_cast<int>(n_samples);
    const std::vector<uint8_t> codes =
        read_bytes(argv[1], static_cast<size_t>(n_samples) * static_cast<size_t>(n_features));
    const std::vector<uint8_t> labels = read_bytes(argv[4], static_cast<size_t>(n_samples));
    auto feature = [&](long j) { return codes.data() + static_cast<size_t>(j) * n_samples; };

    Scratch scratch;
    scratch.merged.resize(n);
    std::vector<char> selected(n_features, 0);
    std::vector<double> score(n_features, 0.0);  // running sum of I(X_j, S; Y) over selected S
    std::vector<long> output;
    std::vector<double> output_scores;

    using clock = std::chrono::steady_clock;
    const auto start = clock::now();

    // Step 0: classMI[j] = I(X_j; Y); first feature = argmax (strict >).
    double max_mi = 0.0;
    long max_mi_feature = 0;
    for (long j = 0; j < n_features; j++) {
      const double mi = mutual_information(feature(j), labels.data(), n, scratch);
      if (mi > max_mi * above) {
        max_mi = mi;
        max_mi_feature = j;
      }
    }
    selected[max_mi_feature] = 1;
    output.push_back(max_mi_feature);
    output_scores.push_back(max_mi);
    const auto first_done = clock::now();

    // Steps 1..k-1: add I(X_j, S; Y) for the newest selected S, take the argmax (strict >).
    for (long i = 1; i < k; i++) {
      const uint8_t* newest = feature(output.back());
      double best = 0.0;
      long best_feature = 0;
      for (long j = 0; j < n_features; j++) {
        if (selected[j]) continue;
        merge_arrays(newest, feature(j), scratch.merged.data(), n, scratch);
        score[j] += mutual_information(scratch.merged.data(), labels.data(), n, scratch);
        if (score[j] > best * above) {
          best = score[j];
          best_feature = j;
        }
      }
      selected[best_feature] = 1;
      output.push_back(best_feature);
      output_scores.push_back(best);
    }
    const auto done = clock::now();

    const double seconds = std::chrono::duration<double>(done - start).count();
    const double first_seconds = std::chrono::duration<double>(first_done - start).count();
    std::printf("selected=");
    for (size_t i = 0; i < output.size(); i++) std::printf(i ? ",%ld" : "%ld", output[i]);
    std::printf(" seconds=%.6f first_seconds=%.6f scores=", seconds, first_seconds);
    for (size_t i = 0; i < output_scores.size(); i++) std::printf(i ? ",%.17g" : "%.17g", output_scores[i]);
    std::printf("\n");
    return 0;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "feast_jmi: %s\n", e.what());
    return 1;
  }
}
