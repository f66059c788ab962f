// The kernel classifier (profiler/analysis/event_classify.h) on kernel names as real
// profiles print them (DeepSeek's published training profile, vLLM on B200, RCCL on MI300,
// PyTorch, TensorRT-LLM, MSCCL++), and the name reader beneath it (kernel_name.h).
#include <QtTest>

#include <string>

#include "profiler/analysis/event_classify.h"
#include "profiler/analysis/kernel_name.h"

using namespace meshwork;
using namespace meshwork::profiler;

namespace {

struct Case {
    const char* name;
    KernelClass cls;
    KernelFamily family;
    Collective collective;
};

}  // namespace

class KernelClassifyTest : public QObject {
    Q_OBJECT

  private slots:
    void reads_demangled_names() {
        auto k = parse_kernel_name(
            "void (anonymous namespace)::multimem_all_reduce_kernel<c10::BFloat16, 16>(c10::BFloat16*, unsigned "
            "long, unsigned int**, unsigned long, unsigned long)");
        QCOMPARE(std::string(k.function), std::string("multimem_all_reduce_kernel"));
        QCOMPARE(k.scopes.size(), std::size_t{1});
        QCOMPARE(std::string(k.scopes[0]), std::string("(anonymous namespace)"));

        k = parse_kernel_name("void dpsk::ep::internode::combine<false, 8, __nv_bfloat16, 8, 2, 16, 24>(int4*, float*)");
        QCOMPARE(std::string(k.function), std::string("combine"));
        QCOMPARE(k.scopes.size(), std::size_t{3});
        QVERIFY(k.in_scope("internode"));

        // The template argument names another library: not this kernel's scope.
        k = parse_kernel_name(
            "void cutlass::device_kernel<dpsk::grouped_gemm::cuda::fp8_ptp128c::GemmKernel>(dpsk::grouped_gemm::"
            "cuda::fp8_ptp128c::GemmKernel::Params)");
        QCOMPARE(std::string(k.function), std::string("device_kernel"));
        QCOMPARE(k.scopes.size(), std::size_t{1});

        k = parse_kernel_name("ncclDevKernel_Generic_1(ncclDevKernelArgsStorage<4096ul>)");
        QCOMPARE(std::string(k.function), std::string("ncclDevKernel_Generic_1"));
        QVERIFY(k.scopes.empty());

        k = parse_kernel_name("float2* foo::bar<int>(int) [clone .kd]");
        QCOMPARE(std::string(k.function), std::string("bar"));

        k = parse_kernel_name("_ZN2ck16tensor_operation6device12_GLOBAL__N_1");
        QCOMPARE(std::string(k.function), std::string("_ZN2ck16tensor_operation6device12_GLOBAL__N_1"));
    }

    void classifies_by_what_the_kernel_is() {
        using C = Collective;
        using F = KernelFamily;
        const KernelClass comm = KernelClass::Communication, compute = KernelClass::Compute;
        const Case cases[] = {
            // NCCL / RCCL, every naming generation.
            {"ncclDevKernel_AllReduce_Sum_bf16_RING_LL", comm, F::Nccl, C::AllReduce},
            {"ncclKernel_SendRecv_RING_SIMPLE_Sum_int8_t(ncclDevComm*, unsigned long, ncclWork*)", comm, F::Nccl,
             C::SendRecv},
            {"void ncclKernel_AllGather_RING_LL_Sum_int8_t(ncclWorkElem)", comm, F::Nccl, C::AllGather},
            {"ncclDevKernel_ReduceScatter_Sum_f32_RING_SIMPLE", comm, F::Nccl, C::ReduceScatter},
            {"ncclDevKernel_Reduce_Sum_f32_RING_LL", comm, F::Nccl, C::Reduce},
            {"ncclDevKernel_Generic", comm, F::Nccl, C::Generic},
            {"ncclDevKernel_Generic_1(ncclDevKernelArgsStorage<4096ul>)", comm, F::Nccl, C::Generic},
            // The importer's tag from the profiler's args decides a generic kernel's collective.
            {"ncclDevKernel_Generic [all_reduce]", comm, F::Nccl, C::AllReduce},
            {"ncclDevKernel_Generic_1(ncclDevKernelArgsStorage<4096ul>) [broadcast]", comm, F::Nccl, C::Broadcast},
            // ... but never overrides what the name says.
            {"ncclDevKernel_AllGather_RING_LL [all_reduce]", comm, F::Nccl, C::AllGather},
            {"mscclKernel_Sum_bf16_LL(ncclDevComm*, mscclAlgo*, mscclWork*)", comm, F::Msccl, C::None},
            // DeepEP in every namespace it ships in; its layout kernel computes locally.
            {"void dpsk::ep::internode::dispatch<false, 8, true, 8>(int4*, float*, long*)", comm, F::DeepEp,
             C::AllToAll},
            {"void dpsk::ep::internode::combine<false, 8, __nv_bfloat16, 8, 2, 16, 24>(int4*, float*)", comm,
             F::DeepEp, C::AllToAll},
            {"void dpsk::ep::internode::notify_dispatch<false, 8>(int const*, long*, int)", comm, F::DeepEp,
             C::AllToAll},
            {"void dpsk::ep::internode::cached_notify<false>(int, int, int)", comm, F::DeepEp, C::AllToAll},
            {"void dpsk::ep::cuda::get_dispatch_layout<256, 32, 8>(long const*, int*, int*, int*, bool*, int, int, "
             "int, int)",
             compute, F::None, C::None},
            {"void deep_ep::intranode::dispatch<8, 768, 8192>(int4*, float*)", comm, F::DeepEp, C::AllToAll},
            {"void deep_ep::internode_ll::combine<false, false, 7168>(void*, void*)", comm, F::DeepEp, C::AllToAll},
            {"void deep_ep::legacy::intranode::barrier<8>(int**, int)", comm, F::DeepEp, C::Barrier},
            {"void deep_ep::elastic::dispatch_impl<true, 8>(void*, void*)", comm, F::DeepEp, C::AllToAll},
            {"void deep_ep::elastic::pp_send_impl<100>(ncclDevComm, ncclWindow_vidmem*, void*, long)", comm,
             F::DeepEp, C::Send},
            {"void deep_ep::elastic::dispatch_copy_epilogue_impl<8>(void*, void*)", compute, F::None, C::None},
            {"void deep_ep::layout::get_dispatch_layout<256, 32, 8>(long const*, int*)", compute, F::None, C::None},
            // PyTorch symmetric memory, in its anonymous namespace or c10d::symmetric_memory.
            {"void (anonymous namespace)::multimem_all_reduce_kernel<c10::BFloat16, 16>(c10::BFloat16*, unsigned "
             "long, unsigned int**, unsigned long, unsigned long)",
             comm, F::SymmetricMemory, C::AllReduce},
            {"void (anonymous namespace)::multimem_all_gather_kernel<16>(char*, char*, unsigned long)", comm,
             F::SymmetricMemory, C::AllGather},
            {"void c10d::symmetric_memory::two_shot_all_reduce_kernel<float, 16, 8>(float**, unsigned long)", comm,
             F::SymmetricMemory, C::AllReduce},
            {"void (anonymous namespace)::one_shot_all_reduce_kernel<c10::BFloat16, 16, 8>(c10::BFloat16**)", comm,
             F::SymmetricMemory, C::AllReduce},
            // Custom all-reduce of vLLM, SGLang, aiter, TensorRT-LLM, FlashInfer.
            {"void vllm::cross_device_reduce_1stage<c10::BFloat16, 8>(vllm::RankData*, vllm::RankSignals, "
             "vllm::Signal*, c10::BFloat16*, int, int)",
             comm, F::CustomAllReduce, C::AllReduce},
            {"void sglang::cross_device_reduce_2stage<__nv_bfloat16, 4>(sglang::RankData*)", comm,
             F::CustomAllReduce, C::AllReduce},
            {"void quickreduce::allreduce_prototype_twoshot<quickreduce::AllReduceTwoshot<__half, "
             "quickreduce::CodecQ4<__half, 4>, true>, __half>(__half const*, __half*, unsigned int)",
             comm, F::CustomAllReduce, C::AllReduce},
            {"void tensorrt_llm::kernels::oneShotAllReduceKernel<__nv_bfloat16, 8>(tensorrt_llm::kernels::"
             "AllReduceParams)",
             comm, F::CustomAllReduce, C::AllReduce},
            {"void tensorrt_llm::kernels::twoShotAllReduceKernel<float, 4, false>(tensorrt_llm::kernels::"
             "AllReduceParams)",
             comm, F::CustomAllReduce, C::AllReduce},
            {"void flashinfer::trtllm_allreduce_fusion::allreduce_fusion_kernel_oneshot_lamport<(flashinfer::"
             "trtllm_allreduce_fusion::AllReduceFusionPattern)1, __nv_bfloat16, 8, true, true>(flashinfer::"
             "trtllm_allreduce_fusion::AllReduceFusionParams<__nv_bfloat16>)",
             comm, F::CustomAllReduce, C::AllReduce},
            // MSCCL++.
            {"void mscclpp::collective::allreducePacket<__nv_bfloat16>(__nv_bfloat16*, __nv_bfloat16*)", comm,
             F::Mscclpp, C::AllReduce},
            {"void mscclpp::collective::(anonymous namespace)::allgatherFullmesh(void*, void*, void*)", comm,
             F::Mscclpp, C::AllGather},
            // Compute: names that mention a collective word but are not communication.
            {"void at::native::(anonymous namespace)::cunn_SoftMaxForward<4, float>(float*, float const*, int)",
             compute, F::None, C::None},
            {"void at::native::reduce_kernel<512, 1, at::native::ReduceOp<float, at::native::func_wrapper_t<float, "
             "at::native::sum_functor<float, float, float>::operator()(at::TensorIterator&)::{lambda(float, "
             "float)#1}>, unsigned int, float, 4, 4> >(at::native::ReduceOp<float>)",
             compute, F::None, C::None},
            {"void cutlass::device_kernel<dpsk::ep::Something>(int)", compute, F::None, C::None},
            {"layer_norm_combine_kernel", compute, F::None, C::None},
        };
        for (const auto& c : cases) {
            const KernelKind k = identify_kernel(c.name);
            QVERIFY2(k.cls == c.cls, c.name);
            QVERIFY2(k.family == c.family, c.name);
            QVERIFY2(k.collective == c.collective, c.name);
            QCOMPARE(nccl_collective_of(c.name), c.cls == comm ? c.collective : C::None);
        }
        QCOMPARE(classify_kernel("Memcpy HtoD (Pageable -> Device)"), KernelClass::Memory);
        QCOMPARE(event_kind_of_kernel("Memset (Device)"), EventKind::Memset);
        QCOMPARE(classify_kernel("ncclSyncwait"), KernelClass::Communication);
        QCOMPARE(event_kind_of_kernel("Sync_wait_kernel"), EventKind::Idle);
    }

    void pytorch_collective_names() {
        using C = Collective;
        QCOMPARE(collective_of_pytorch_name("allreduce"), C::AllReduce);
        QCOMPARE(collective_of_pytorch_name("allreduce_coalesced"), C::AllReduce);
        QCOMPARE(collective_of_pytorch_name("_allgather_base"), C::AllGather);
        QCOMPARE(collective_of_pytorch_name("all_gather_into_tensor_coalesced"), C::AllGather);
        QCOMPARE(collective_of_pytorch_name("_reduce_scatter_base"), C::ReduceScatter);
        QCOMPARE(collective_of_pytorch_name("reduce_scatter_tensor_coalesced"), C::ReduceScatter);
        QCOMPARE(collective_of_pytorch_name("alltoall_base"), C::AllToAll);
        QCOMPARE(collective_of_pytorch_name("all_to_all"), C::AllToAll);
        QCOMPARE(collective_of_pytorch_name("broadcast"), C::Broadcast);
        QCOMPARE(collective_of_pytorch_name("_broadcast_oop"), C::Broadcast);
        QCOMPARE(collective_of_pytorch_name("reduce"), C::Reduce);
        QCOMPARE(collective_of_pytorch_name("send"), C::Send);
        QCOMPARE(collective_of_pytorch_name("recv"), C::Recv);
        QCOMPARE(collective_of_pytorch_name("barrier"), C::Barrier);
        QCOMPARE(collective_of_pytorch_name("gather"), C::None);
        QCOMPARE(collective_of_pytorch_name(""), C::None);
    }

    void collective_tags_round_trip() {
        const std::string tagged = with_collective_tag("ncclDevKernel_Generic", "all_reduce");
        QCOMPARE(tagged, std::string("ncclDevKernel_Generic [all_reduce]"));
        QCOMPARE(std::string(collective_tag(tagged)), std::string("all_reduce"));
        QCOMPARE(std::string(without_collective_tag(tagged)), std::string("ncclDevKernel_Generic"));
        // Tagged twice: one tag.
        QCOMPARE(with_collective_tag(tagged, "broadcast"), std::string("ncclDevKernel_Generic [broadcast]"));
        // A clone suffix is no tag.
        QVERIFY(collective_tag("void f<int>(int) [clone .kd]").empty());
        QCOMPARE(collective_of_event("ncclDevKernel_Generic [reduce_scatter]"), Collective::ReduceScatter);
    }

    void abbreviates_long_names_for_tables() {
        QCOMPARE(abbreviate_kernel_name("gemm", 100), std::string("gemm"));
        std::string huge = "void dpsk::ep::internode::combine<";
        for (int i = 0; i < 500; ++i) huge += "cute::tuple<cute::C<1>, cute::C<2> >, ";
        huge += "int>(int4*, float*)";
        QVERIFY(huge.size() > 10000);
        QCOMPARE(abbreviate_kernel_name(huge, 100), std::string("void dpsk::ep::internode::combine<...>(...)"));
        const std::string tagged = "ncclDevKernel_Generic_1(" + std::string(200, 'x') + ") [all_reduce]";
        QCOMPARE(abbreviate_kernel_name(tagged, 60), std::string("ncclDevKernel_Generic_1(...) [all_reduce]"));
        const std::string flat(300, 'k');
        const std::string cut = abbreviate_kernel_name(flat, 50);
        QCOMPARE(cut.size(), std::size_t{50});
        QVERIFY(cut.substr(47) == "...");
    }
};

QTEST_GUILESS_MAIN(KernelClassifyTest)
#include "tst_kernel_classify.moc"
