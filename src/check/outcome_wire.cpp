#include "check/outcome_wire.h"

#include <nlohmann/json.hpp>

#include "common/errors.h"

namespace nlohmann {
template <class T>
struct adl_serializer<std::optional<T>> {
  static void to_json(json& j, const std::optional<T>& o) {
    if (o) j = *o;
    else j = nullptr;
  }
  static void from_json(const json& j, std::optional<T>& o) {
    if (j.is_null()) o.reset();
    else o = j.get<T>();
  }
};
}  // namespace nlohmann

// The shape-reduction types travel too; their serializers live here, with the wire format.
namespace nlohmann {
template <>
struct adl_serializer<onnx_tv::reduce::ReducedFactor> {
  static void to_json(json& j, const onnx_tv::reduce::ReducedFactor& f) {
    j = {{"full", f.full}, {"reduced", f.reduced}, {"why", f.why}};
  }
  static void from_json(const json& j, onnx_tv::reduce::ReducedFactor& f) {
    j.at("full").get_to(f.full), j.at("reduced").get_to(f.reduced), j.at("why").get_to(f.why);
  }
};
template <>
struct adl_serializer<onnx_tv::reduce::ReducedDim> {
  static void to_json(json& j, const onnx_tv::reduce::ReducedDim& d) {
    j = {{"value", d.value}, {"axis", d.axis}, {"full", d.full}, {"reduced", d.reduced},
         {"factors", d.factors}};
  }
  static void from_json(const json& j, onnx_tv::reduce::ReducedDim& d) {
    j.at("value").get_to(d.value), j.at("axis").get_to(d.axis), j.at("full").get_to(d.full);
    j.at("reduced").get_to(d.reduced), j.at("factors").get_to(d.factors);
  }
};
template <>
struct adl_serializer<onnx_tv::reduce::KeptWhole> {
  static void to_json(json& j, const onnx_tv::reduce::KeptWhole& k) {
    j = {{"mesh_axes", k.mesh_axes},         {"every_rank", k.every_rank},
         {"micro_batches", k.micro_batches}, {"shape_reduction", k.shape_reduction},
         {"counted_sums", k.counted_sums}};
  }
  static void from_json(const json& j, onnx_tv::reduce::KeptWhole& k) {
    j.at("mesh_axes").get_to(k.mesh_axes), j.at("every_rank").get_to(k.every_rank);
    j.at("micro_batches").get_to(k.micro_batches);
    j.at("shape_reduction").get_to(k.shape_reduction), j.at("counted_sums").get_to(k.counted_sums);
  }
};
}  // namespace nlohmann

namespace onnx_tv::check {

NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE(NodeRef, file, rank, node, op_type, output)
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE(WitnessEntry, symbol, value, full_symbol)
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE(Mismatch, spec_output, region_start, region_end, element,
                                   full_element, binding, partial, ranks, rank_value, witness,
                                   spec_number, plan_number, spec_expr, plan_expr, spec_node,
                                   rank_node)
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE(CheckStats, ranks, spec_nodes, rank_nodes, collectives,
                                   bindings, elements_compared, max_terms, atoms, polynomials,
                                   staged, stages, stages_proven, stages_reused, layers,
                                   layers_left_out, sat_coefficients, sat_routings, sat_max_variables,
                                   sat_max_clauses, sat_calls, sat_seconds, seconds, processes,
                                   process_instances)
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE(Reduction, requested, applied, not_applied, dims, other_dims,
                                   kept_full, full_elements, reduced_elements, fewer_ranks,
                                   fewer_rank_axes, rank_origin, fewer_micro_batches)
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE(CheckResult, verdict, message, mismatch, failing_outputs,
                                   warnings, stats, reduction)
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE(InstanceOutcome, instance, again, result, kept, error_kind,
                                   error_message)

namespace {

std::string to_bytes(const nlohmann::json& j) {
  const std::vector<uint8_t> cbor = nlohmann::json::to_cbor(j);
  return std::string(cbor.begin(), cbor.end());
}

template <class T>
T from_bytes(const std::string& bytes) {
  try {
    return nlohmann::json::from_cbor(bytes).get<T>();
  } catch (const nlohmann::json::exception& e) {
    ONNX_TV_ASSERT(false, std::string("outcome bytes from another process do not decode: ") +
                              e.what());
  }
  return T{};
}

}  // namespace

std::string encode_outcomes(const std::vector<InstanceOutcome>& outcomes) {
  return to_bytes(outcomes);
}

std::vector<InstanceOutcome> decode_outcomes(const std::string& bytes) {
  return from_bytes<std::vector<InstanceOutcome>>(bytes);
}

std::string encode_result(const CheckResult& r) { return to_bytes(r); }

CheckResult decode_result(const std::string& bytes) { return from_bytes<CheckResult>(bytes); }

void describe_error(std::exception_ptr e, std::string& kind, std::string& message) {
  try {
    std::rethrow_exception(e);
  } catch (const InternalError& x) {  // most derived first
    kind = "internal", message = x.message();
  } catch (const MathError& x) {
    kind = "math", message = x.message();
  } catch (const InputError& x) {
    kind = "input", message = x.message();
  } catch (const NotApplicable& x) {
    kind = "not_applicable", message = x.message();
  } catch (const ResourceLimit& x) {
    kind = "limit", message = x.message();
  } catch (const Unsupported& x) {
    kind = "unsupported", message = x.message();
  } catch (const Error& x) {
    kind = "error", message = x.message();
  } catch (const std::exception& x) {  // not one of onnx-tv's kinds: a bug where it was raised
    kind = "internal", message = x.what();
  }
}

std::exception_ptr error_from(const std::string& kind, const std::string& message) {
  if (kind == "internal") return std::make_exception_ptr(InternalError(message));
  if (kind == "math") return std::make_exception_ptr(MathError(message));
  if (kind == "input") return std::make_exception_ptr(InputError(message));
  if (kind == "not_applicable") return std::make_exception_ptr(NotApplicable(message));
  if (kind == "limit") return std::make_exception_ptr(ResourceLimit(message));
  if (kind == "unsupported") return std::make_exception_ptr(Unsupported(message));
  ONNX_TV_ASSERT(kind == "error", "an error of unknown kind from another process: " + kind);
  return std::make_exception_ptr(Error(message));
}

}  // namespace onnx_tv::check
