#include "exec/linker.h"

#include <algorithm>
#include <map>
#include <queue>
#include <set>
#include <unordered_map>

#include "common/errors.h"
#include "common/memory_limit.h"
#include "ir/comm_parse.h"
#include "ir/producers.h"

namespace onnx_tv::exec {

namespace {

std::string group_string(const std::vector<int64_t>& g) {
  std::string s = "[";
  for (size_t i = 0; i < g.size(); ++i) s += (i ? ", " : "") + std::to_string(g[i]);
  return s + "]";
}

std::string where(const ir::Plan& plan, int64_t rank, size_t node_index) {
  const ir::Graph& g = plan.program_of(rank);
  return g.nodes[node_index].describe(node_index) + " of rank " + std::to_string(rank) + " (" +
         g.file + ")";
}

// The attributes every member of one collective instance must agree on.
bool same_collective(const ir::CommOp& a, const ir::CommOp& b) {
  return a.kind == b.kind && a.group == b.group && a.reduce == b.reduce && a.axis == b.axis &&
         a.split_axis == b.split_axis && a.concat_axis == b.concat_axis &&
         a.flatten == b.flatten && a.root == b.root;
}

struct InstanceKey {
  ir::CommKind kind;
  std::vector<int64_t> group;
  std::string pairing;  // "key:<key>" or "#<k>"
  bool operator<(const InstanceKey& o) const {
    return std::tie(kind, group, pairing) < std::tie(o.kind, o.group, o.pairing);
  }
};

class Linker {
 public:
  Linker(const ir::Plan& plan, size_t memory_bytes)
      : plan_(plan), memory_bytes_(memory_bytes) {}

  LinkedPlan run() {
    collect();
    check_collective_order();
    pair_p2p();
    return schedule();
  }

 private:
  void collect() {
    size_t nodes = 0;
    for (int64_t r = 0; r < plan_.world_size; ++r) nodes += plan_.program_of(r).nodes.size();
    steps_.reserve(nodes);
    for (int64_t r = 0; r < plan_.world_size; ++r) {
      const ir::Graph& g = plan_.program_of(r);
      std::map<std::pair<ir::CommKind, std::vector<int64_t>>, int64_t> order;
      const std::string phase = "linking the ranks, rank " + std::to_string(r);
      for (size_t i = 0; i < g.nodes.size(); ++i) {
        check_memory(memory_bytes_, phase);
        if (!ir::is_comm_op(g.nodes[i])) {
          Step s;
          s.members.push_back({r, i, nullptr});
          steps_.push_back(std::move(s));
          continue;
        }
        auto shared = std::make_shared<const ir::CommOp>(ir::parse_comm_op(plan_, r, i));
        const ir::CommOp& op = *shared;
        if (op.kind == ir::CommKind::Send) {
          sends_[{r, op.peer, op.tag}].push_back({r, i, shared});
        } else if (op.kind == ir::CommKind::Recv) {
          recvs_[{op.peer, r, op.tag}].push_back({r, i, shared});
        } else {
          InstanceKey key{op.kind, op.group, ""};
          key.pairing = op.key.empty() ? "#" + std::to_string(order[{op.kind, op.group}]++)
                                       : "key:" + op.key;
          auto& inst = instances_[key];
          for (const auto& m : inst)
            if (m.rank == r)
              throw InputError(ir::comm_kind_name(op.kind) + " key '" + op.key +
                               "' is used twice on rank " + std::to_string(r) + ": " +
                               where(plan_, r, m.node_index) + " and " + where(plan_, r, i));
          if (!inst.empty() && !same_collective(*inst[0].comm, op))
            throw InputError(where(plan_, r, i) + " does not match its partner " +
                             where(plan_, inst[0].rank, inst[0].node_index) +
                             ": the members of one collective must agree on type, group and "
                             "attributes");
          inst.push_back({r, i, shared});
          std::vector<int64_t> members(op.group);
          std::sort(members.begin(), members.end());
          sequence_[{members, r}].push_back(key);
        }
      }
    }
    for (auto& [key, members] : instances_) {
      std::set<int64_t> present;
      for (const auto& m : members) present.insert(m.rank);
      for (int64_t g : key.group) {
        if (!present.count(g)) {
          const auto& m = members[0];
          throw InputError(ir::comm_kind_name(key.kind) + " " + where(plan_, m.rank, m.node_index) +
                           " on group " + group_string(key.group) + " has no partner on rank " +
                           std::to_string(g) + " (" + plan_.program_of(g).file +
                           "): a real job would hang there");
        }
      }
      Step s;
      s.kind = Step::Kind::Collective;
      // Members in group order: gather order, scatter chunks and broadcast roots follow it.
      for (int64_t g : key.group)
        for (const auto& m : members)
          if (m.rank == g) s.members.push_back(m);
      steps_.push_back(std::move(s));
    }
  }

  // Members of one group must run its collectives in the same order, key or no key.
  void check_collective_order() {
    std::map<std::vector<int64_t>, std::pair<int64_t, const std::vector<InstanceKey>*>> first;
    for (const auto& [gr, seq] : sequence_) {
      auto [it, fresh] = first.try_emplace(gr.first, gr.second, &seq);
      if (fresh) continue;
      const auto& ref = *it->second.second;
      for (size_t k = 0; k < std::max(ref.size(), seq.size()); ++k) {
        if (k < ref.size() && k < seq.size() && !(ref[k] < seq[k]) && !(seq[k] < ref[k]))
          continue;
        auto name = [&](const std::vector<InstanceKey>& s) {
          if (k >= s.size()) return std::string("nothing");
          return ir::comm_kind_name(s[k].kind) +
                 (s[k].pairing.rfind("key:", 0) == 0 ? " '" + s[k].pairing.substr(4) + "'"
                                                     : " " + s[k].pairing);
        };
        throw InputError("collectives on group " + group_string(gr.first) +
                         " are issued in a different order: collective " + std::to_string(k) +
                         " is " + name(ref) + " on rank " + std::to_string(it->second.first) +
                         " but " + name(seq) + " on rank " + std::to_string(gr.second) +
                         " (NCCL would hang or mis-pair them)");
      }
    }
  }

  void pair_p2p() {
    for (auto& [k, sends] : sends_) {
      auto& recvs = recvs_[k];
      const auto [from, to, tag] = k;
      for (size_t i = 0; i < std::max(sends.size(), recvs.size()); ++i) {
        if (i >= recvs.size())
          throw InputError("Send " + where(plan_, from, sends[i].node_index) + " to rank " +
                           std::to_string(to) + " with tag " + std::to_string(tag) +
                           " has no matching Recv on rank " + std::to_string(to));
        if (i >= sends.size())
          throw InputError("Recv " + where(plan_, to, recvs[i].node_index) + " from rank " +
                           std::to_string(from) + " with tag " + std::to_string(tag) +
                           " has no matching Send on rank " + std::to_string(from));
        Step s;
        s.kind = Step::Kind::P2P;
        s.members = {sends[i], recvs[i]};
        steps_.push_back(std::move(s));
      }
    }
    for (auto& [k, recvs] : recvs_) {
      if (!recvs.empty() && !sends_.count(k)) {
        const auto [from, to, tag] = k;
        throw InputError("Recv " + where(plan_, to, recvs[0].node_index) + " from rank " +
                         std::to_string(from) + " with tag " + std::to_string(tag) +
                         " has no matching Send on rank " + std::to_string(from));
      }
    }
  }

  // Ranks running one file share its producer table (ir/producers.h).
  const ir::InputProducers& local_producers(const ir::Graph& g) {
    auto [it, fresh] = producers_.try_emplace(&g);
    if (fresh) it->second = ir::input_producers(g);
    return it->second;
  }

  // Kahn's algorithm over steps, edges from each tensor's producing step.
  LinkedPlan schedule() {
    std::vector<std::vector<size_t>> step_of(plan_.world_size);  // rank, node -> step
    for (int64_t r = 0; r < plan_.world_size; ++r)
      step_of[r].assign(plan_.program_of(r).nodes.size(), steps_.size());
    const std::string phase = "linking the ranks, ordering their steps";
    for (size_t s = 0; s < steps_.size(); ++s) {
      check_memory(memory_bytes_, phase);
      for (const auto& m : steps_[s].members) step_of[m.rank][m.node_index] = s;
    }
    // Each step's users, in one array for all, grouped by step (a vector per step was an
    // allocation per step, and there are millions): a first pass counts them, a second places
    // them, each finding a step's dependencies again rather than holding every edge at once.
    auto dependencies = [&](size_t s, std::vector<size_t>& deps) {
      check_memory(memory_bytes_, phase);
      deps.clear();
      for (const auto& m : steps_[s].members)
        for (size_t j : local_producers(plan_.program_of(m.rank))[m.node_index])
          if (j != ir::kNoProducer)
            if (const size_t d = step_of[m.rank][j]; d != s) deps.push_back(d);
      std::sort(deps.begin(), deps.end());
      deps.erase(std::unique(deps.begin(), deps.end()), deps.end());
    };
    std::vector<size_t> pending(steps_.size(), 0), first_user(steps_.size() + 1, 0);
    std::vector<size_t> deps;
    for (size_t s = 0; s < steps_.size(); ++s) {
      dependencies(s, deps);
      for (size_t d : deps) ++first_user[d + 1];
      pending[s] = deps.size();
    }
    for (size_t s = 0; s < steps_.size(); ++s) first_user[s + 1] += first_user[s];
    std::vector<size_t> users(first_user.back());
    {
      std::vector<size_t> at(first_user.begin(), first_user.end() - 1);
      for (size_t s = 0; s < steps_.size(); ++s) {
        dependencies(s, deps);
        for (size_t d : deps) users[at[d]++] = s;  // users in step order
      }
    }
    std::vector<std::vector<size_t>>().swap(step_of);
    // Lowest step index first keeps rank-local file order where dataflow allows.
    std::priority_queue<size_t, std::vector<size_t>, std::greater<>> ready;
    for (size_t s = 0; s < steps_.size(); ++s)
      if (!pending[s]) ready.push(s);
    std::vector<size_t> order;  // the steps in the order they run
    order.reserve(steps_.size());
    while (!ready.empty()) {
      size_t s = ready.top();
      ready.pop();
      order.push_back(s);
      for (size_t k = first_user[s]; k < first_user[s + 1]; ++k)
        if (--pending[users[k]] == 0) ready.push(users[k]);
    }
    if (order.size() != steps_.size()) {
      for (size_t s = 0; s < steps_.size(); ++s) {
        if (pending[s] == 0) continue;  // scheduled
        const auto& m = steps_[s].members[0];
        throw InputError("the plan's dataflow has a cycle across ranks through " +
                         where(plan_, m.rank, m.node_index) +
                         ": no order of execution can satisfy it");
      }
    }
    std::vector<size_t>().swap(users);  // freed, not only emptied
    std::vector<size_t>().swap(first_user);
    // The steps put in that order where they are, one cycle of the permutation at a time (a
    // second array of steps would double the peak of linking a large plan).
    std::vector<bool> placed(steps_.size(), false);
    for (size_t i = 0; i < steps_.size(); ++i) {
      if (placed[i]) continue;
      Step held = std::move(steps_[i]);
      size_t at = i;
      for (;;) {
        placed[at] = true;
        const size_t from = order[at];
        if (from == i) break;
        steps_[at] = std::move(steps_[from]);
        at = from;
      }
      steps_[at] = std::move(held);
    }
    LinkedPlan out;
    out.steps = std::move(steps_);
    for (const auto& s : out.steps) {
      out.collectives += s.kind == Step::Kind::Collective;
      out.p2p += s.kind == Step::Kind::P2P;
    }
    return out;
  }

  using P2PKey = std::tuple<int64_t, int64_t, int64_t>;  // sender, receiver, tag
  const ir::Plan& plan_;
  const size_t memory_bytes_;
  std::vector<Step> steps_;
  std::map<InstanceKey, std::vector<Step::Member>> instances_;
  std::map<std::pair<std::vector<int64_t>, int64_t>, std::vector<InstanceKey>> sequence_;
  std::map<P2PKey, std::vector<Step::Member>> sends_, recvs_;
  std::unordered_map<const ir::Graph*, ir::InputProducers> producers_;
};

}  // namespace

LinkedPlan link_plan(const ir::Plan& plan, size_t memory_bytes) {
  return Linker(plan, memory_bytes).run();
}

}  // namespace onnx_tv::exec
