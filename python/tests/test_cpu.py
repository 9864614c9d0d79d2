"""CPU tests: argument checking and the fake (meta) implementation; no GPU or runtime library needed."""
import pytest
import torch

import cudal2

F16 = torch.float16


def meta(*shape, dtype=F16):
    return torch.empty(*shape, dtype=dtype, device="meta")


def test_op_registered():
    assert hasattr(torch.ops.cudal2, "mm")
    assert cudal2.mm is not None


@pytest.mark.parametrize("m,n,k", [(1, 1, 1), (64, 64, 64), (7, 4097, 1031), (0, 5, 3), (5, 0, 3), (5, 3, 0)])
def test_fake_shape(m, n, k):
    c = torch.ops.cudal2.mm(meta(m, k), meta(k, n))
    assert c.shape == (m, n) and c.dtype == F16 and c.device.type == "meta"
    assert c.is_contiguous()


def test_fake_tn_view_and_accum():
    b = meta(48, 32).t()  # K=32 x N=48, column-major: TN
    assert cudal2.layout_of(b) == "tn"
    assert cudal2.mm(meta(16, 32), b, accum="f16").shape == (16, 48)


def test_fake_under_fake_tensor_mode():
    from torch._subclasses.fake_tensor import FakeTensorMode

    with FakeTensorMode():
        a = torch.empty(8, 16, dtype=F16)
        b = torch.empty(16, 4, dtype=F16)
        # the fake implementation checks devices like the real one: CPU is refused
        with pytest.raises(RuntimeError, match="CUDA tensors"):
            torch.ops.cudal2.mm(a, b)


def test_opcheck_schema():
    # The op's schema and fake implementation agree (torch.library's own checker, meta inputs).
    schema = str(torch.ops.cudal2.mm.default._schema)
    assert schema.startswith("cudal2::mm(Tensor a, Tensor b, str accum=")
    assert schema.endswith("-> Tensor")


@pytest.mark.parametrize(
    "a,b,exc,msg",
    [
        (meta(4, 8, dtype=torch.float32), meta(8, 3), TypeError, "float16"),
        (meta(4, 8), meta(8, 3, dtype=torch.bfloat16), TypeError, "float16"),
        (meta(4, 8), meta(7, 3), ValueError, "cannot be multiplied"),
        (meta(2, 4, 8), meta(8, 3), ValueError, "2-D"),
        (meta(8), meta(8, 3), ValueError, "2-D"),
        (torch.zeros(4, 8, dtype=F16), torch.zeros(8, 3, dtype=F16), RuntimeError, "CUDA tensors"),
        (meta(4, 8), torch.zeros(8, 3, dtype=F16), RuntimeError, "CUDA tensors"),
    ],
)
def test_argument_errors(a, b, exc, msg):
    with pytest.raises(exc, match=msg):
        cudal2.mm(a, b)


def test_bad_accum():
    with pytest.raises(ValueError, match="accum"):
        cudal2.mm(meta(4, 8), meta(8, 3), accum="f64")


def test_not_a_tensor():
    with pytest.raises((TypeError, RuntimeError)):
        cudal2.mm([[1.0]], meta(1, 1))


def test_layout_detection():
    assert cudal2.layout_of(meta(8, 3)) == "nn"
    assert cudal2.layout_of(meta(3, 8).t()) == "tn"
    assert cudal2.layout_of(meta(8, 6)[:, ::2]) is None  # strided columns: copied to row-major
    assert cudal2.layout_of(meta(8, 1)) == "nn"
    assert cudal2.layout_of(meta(1, 8).t()) in ("nn", "tn")  # a K x 1 vector is both


def test_compile_fullgraph_no_graph_break():
    graphs = []

    def backend(gm, example_inputs):
        graphs.append(gm)
        return gm

    def f(x, w):
        return torch.relu(cudal2.mm(x, w.t())) + 1

    torch._dynamo.reset()
    out = torch.compile(f, fullgraph=True, backend=backend)(meta(16, 32), meta(24, 32))
    assert out.shape == (16, 24)
    assert len(graphs) == 1
    assert "torch.ops.cudal2.mm" in graphs[0].code
    expl = torch._dynamo.explain(f)(meta(16, 32), meta(24, 32))
    assert expl.graph_break_count == 0 and expl.graph_count == 1


def test_compile_aot_eager_uses_fake():
    # aot_eager traces through the fake implementation (FakeTensorMode) and runs the op on meta.
    torch._dynamo.reset()
    f = torch.compile(lambda x, y: cudal2.mm(x, y) * 2, fullgraph=True, backend="aot_eager")
    assert f(meta(5, 7), meta(7, 9)).shape == (5, 9)


def test_runtime_library_candidates_named():
    from cudal2 import _lib

    c = _lib.candidates()
    assert any(p.endswith("libcudal2_runtime.so") for p in c)


def test_runtime_library_loads_if_built():
    # Where a built library is at hand (CI: ctest passes its path), it loads and answers on a CPU-only machine.
    import os

    from cudal2 import _lib

    if not any(os.path.exists(p) for p in _lib.candidates()[:-1]):
        pytest.skip("libcudal2_runtime.so not built")
    lib = _lib.load()
    assert lib.cudal2_status_string(1).decode()


def test_installed_package_is_the_one_tested():
    # ctest (run_ctest.sh) installs the wheel and sets CUDAL2_TEST_INSTALLED: the wheel must carry the library.
    import os

    if os.environ.get("CUDAL2_TEST_INSTALLED") != "1":
        pytest.skip("testing the source tree")
    pkg = os.path.dirname(cudal2.__file__)
    assert not os.path.exists(os.path.join(pkg, "..", "setup.py")), f"imported the source tree: {pkg}"
    assert os.path.isfile(os.path.join(pkg, "lib", "libcudal2_runtime.so"))


def test_backend_is_the_compiled_op_where_built():
    # ctest builds the wheel with --no-build-isolation against this PyTorch: the C++ op must be in it.
    import os

    if os.environ.get("CUDAL2_TEST_INSTALLED") == "1" and os.environ.get("CUDAL2_PYTHON_OP") != "1":
        assert cudal2.BACKEND == "c++"
    assert cudal2.BACKEND in ("c++", "python")


def test_autograd_shapes_on_meta():
    if cudal2.BACKEND != "c++":
        pytest.skip("the Python op has no autograd formula")
    x = meta(4, 8).requires_grad_()
    w = meta(6, 8).requires_grad_()  # nn.Linear's weight: b = w.t() is TN
    y = cudal2.mm(x, w.t())
    assert y.requires_grad and y.shape == (4, 6)
    y.sum().backward()
    assert x.grad.shape == (4, 8) and w.grad.shape == (6, 8)
    assert w.grad.is_contiguous()  # computed as dC^T A, not transposed
    b = meta(8, 6).requires_grad_()  # NN
    cudal2.mm(x, b).sum().backward()
    assert b.grad.shape == (8, 6)


def test_no_autograd_node_without_grad():
    y = cudal2.mm(meta(4, 8), meta(8, 6))
    assert y.grad_fn is None and not y.requires_grad


def test_patch_replaces_linear_layers():
    model = torch.nn.Sequential(torch.nn.Linear(8, 16), torch.nn.ReLU(),
                                torch.nn.Sequential(torch.nn.Linear(16, 4, bias=False)))
    w0 = model[0].weight
    out = cudal2.patch(model, filter=lambda name, m: name != "2.0")
    assert out is model
    assert type(model[0]) is cudal2.Linear and model[0].weight is w0
    assert type(model[2][0]) is torch.nn.Linear  # filtered out by its dotted name
    cudal2.patch(model)
    assert type(model[2][0]) is cudal2.Linear and model[2][0].bias is None
    # Off CUDA or fp16 it is nn.Linear's own forward.
    x = torch.randn(3, 5, 8)
    ref = torch.nn.functional.linear(torch.relu(torch.nn.functional.linear(x, w0, model[0].bias)),
                                     model[2][0].weight)
    assert torch.allclose(model(x), ref)
    assert type(cudal2.patch(torch.nn.Linear(2, 3))) is cudal2.Linear


def test_linear_op_is_nn_linears_product_off_cuda():
    # torch.ops.cudal2.linear (what cudal2.Linear calls): anything but an fp16 CUDA pair is
    # at::linear's product, bit for bit, with autograd.
    if cudal2.BACKEND != "c++":
        pytest.skip("the op is registered by the C++ extension")
    torch.manual_seed(0)
    x = torch.randn(3, 5, 8, requires_grad=True)
    w = torch.randn(4, 8, requires_grad=True)
    y = torch.ops.cudal2.linear(x, w)
    assert torch.equal(y, torch.nn.functional.linear(x, w))
    y.sum().backward()
    assert x.grad.shape == x.shape and w.grad.shape == w.shape
