"""The DeepSeek bug catalogue: bugs that MoE and MLA training really had, each as an edit of a
correct plan of models/deepseek or a generator-level bug (PlanConfig.bug, moe_layer.py,
moe_router.py, plan.py), with the upstream report it comes from."""
from .mutants import _c, remove, set_const

L1 = "/mb0/layers.1/mlp"
E0 = "/mb0/layers.0/mlp"  # the MoE layer of ds3_ep, expert parallel by AllToAll

DS_CATALOGUE = [
    _c("ds3_router_grad_partial", "router_grad_not_reduced", "ds3_b4", "tp2_mb2",
       "with the experts split inside the TP group, each rank's gate gradient holds only its own "
       "experts' columns (zeros elsewhere) and the router's gradient is never summed over TP",
       "grad_layers.1.router", 0, "torchtitan #2387, Megatron-LM #599",
       bug="router_grad_partial", node=L1 + "/gate/Concat_gates_grad_grad",
       near=L1 + "/gate/Mul_route_scale_grad"),
    _c("ds3_aux_grad_dropped", "aux_loss_grad_dropped", "ds3_b4", "dp2_mb2",
       "the auxiliary loss is added to the reported loss but its gradient never reaches the "
       "router", "grad_layers.1.router", 0, "NeMo Automodel #1408",
       bug="aux_grad_dropped", node=L1 + "/gate/Mul_dsigmoid_grad"),
    _c("ds3_aux_grad_scaled_dp", "aux_loss_grad_scaled", "ds3_b4", "dp2_mb2",
       "the auxiliary loss's gradient is scaled by the data-parallel size once more",
       "grad_layers.1.router", 0, "Megatron-LM #5047",
       bug="aux_grad_scaled_dp", node=L1 + "/gate/aux_loss/Mul_alpha_grad"),
    _c("ds3_routing_probs_no_grad", "routing_probs_without_grad", "ds3_b4", "dp2_mb2",
       "the routing probabilities are gathered without gradient: only the auxiliary loss "
       "reaches the router", "grad_layers.1.router", 0, "NeMo Automodel #2995",
       bug="routing_probs_no_grad", node=L1 + "/gate/Mul_detached_grad"),
    _c("ds3_moe_bwd_no_reduce_scatter", "missing_reduce_scatter_in_backward", "ds3_b4",
       "tp2_sp_mb2",
       "under sequence parallelism the MoE layer all-gathers the tokens, and its backward keeps "
       "the own chunk of the input gradient without reduce-scattering it", "grad_x", 0,
       "NeMo Automodel #1260",
       bug="moe_bwd_no_reduce_scatter", node=L1 + "/Slice_own_chunk_grad"),
    _c("ds3_local_expert_ids", "global_vs_local_expert_ids", "ds3_b4", "tp2_mb2",
       "the second TP rank combines its experts with the gates of experts 0 and 1 (local ids "
       "used as global ones)", "loss", 1, "vllm-gaudi #1796",
       bug="local_expert_ids", node=L1 + "/experts/Slice_gates"),
    _c("ds3_combine_biased_scores", "combine_weights_from_biased_scores", "ds3_b4", "dp2_mb2",
       "the combine weights are read from the scores plus the load-balancing bias, which is "
       "meant for the selection only", "loss", 0, "DeepSeek-V3 technical report, section 2.1.2",
       bug="combine_biased_scores", node=L1 + "/gate/GatherElements"),
    _c("ds3_load_local_counts", "bias_update_from_local_counts", "ds3_b4", "dp2_mb2",
       "the tokens per expert that the bias update reads are this rank's, not summed over the "
       "data-parallel ranks", "load_layers.1", 0, "DeepSeek-V3 technical report, section 2.1.2",
       bug="load_local_counts", node="/mb1/stats/load_layers.1/Add_mb1"),
    _c("ds3_shared_expert_partial", "shared_expert_output_partial", "ds3_b4", "tp2_mb2",
       "the shared expert's row-parallel output is added after the routed experts' all-reduce, "
       "left partial", "loss", 0, "vLLM #37856",
       bug="shared_expert_partial", node=L1 + "/Add_shared", near=L1 + "/Reshape_shared"),
    _c("ds3_mla_kv_grad_not_reduced", "mla_latent_grad_not_tp_reduced", "ds3_b4", "tp2_mb2",
       "the gradient of MLA's compressed kv latent, partial over the heads of each TP rank, is "
       "not all-reduced before the kv norm and the kv down-projection's backward",
       "grad_layers.0.w_kv_a", 0, "Pai-Megatron-Patch #397",
       edit=lambda ms, m, p: [remove(ms, [0, 1], "/mb%d/layers.0/self_attn/kv_b_proj/tp/AllReduce" % i)
                              for i in (1, 0)][-1]),
    _c("ds3_expert_grad_scaled_by_ep", "expert_grad_scaled_by_ep", "ds3_b4", "dp2_tp2_mb2",
       "the experts' gradients, complete on the rank that holds each expert, are divided by the "
       "expert-parallel (here TP) size as well as the data-parallel size",
       "grad_layers.1.experts.w_up", 0, "megablocks #20, DeepSpeed #5259",
       edit=lambda ms, m, p: set_const(ms, [0, 1, 2, 3], "/grad_sync/layers.1.experts.w_up/Mul_average",
                                       1, 1.0 / (p.dp * p.tp))),
    _c("ds3_ep_capacity_per_rank", "capacity_computed_per_rank", "ds3_ep_b2", "ep2_capacity2",
       "GShard's dispatch with a capacity computed per rank from an even load of its own "
       "tokens, the top-k factor forgotten (tokens / experts), instead of one above its token "
       "count: an expert more tokens choose drops the rest", "loss", 0,
       "capacity computed per rank (issue list)",
       bug="capacity_per_rank", node=E0 + "/dispatch/OneHot", near=E0 + "/dispatch/Cast"),
    _c("ds3_ep_expert_grad_unscaled", "expert_grad_unscaled_by_ep", "ds3_ep", "ep2",
       "the experts' gradients, summed over the tokens of every EP rank by the AllToAll, are "
       "not divided by the EP size as the data-parallel mean of the other weights is",
       "grad_layers.0.experts.w_up", 0, "pytorch #160285, megablocks #20",
       bug="expert_grad_unscaled_ep", node="/outputs/grad_layers.0.experts.w_up/Identity"),
    _c("ds3_ep_wrong_grad_group", "wrong_expert_parallel_group", "ds3_ep", "dp2_ep2",
       "the experts' gradients are all-reduced over the DP and EP ranks together, where only "
       "the expert-data-parallel group holds the same experts", "grad_layers.0.experts.w_up", 0,
       "a wrong expert-parallel group (issue list)",
       bug="expert_grad_ep_group", node="/grad_sync/layers.0.experts.w_up/AllReduce"),
    _c("ds2_router_grad_partial", "router_grad_not_reduced", "ds2_b2", "tp2",
       "V2's softmax router with the experts split inside the TP group: the gate gradient of "
       "each rank holds only its own experts' columns", "grad_layers.1.router", 0,
       "torchtitan #2387", bug="router_grad_partial", node=L1 + "/gate/Concat_gates_grad_grad",
       near=L1 + "/gate/Add_aux_grad"),
]
