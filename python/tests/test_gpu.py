"""GPU tests: cudal2.mm against an fp64 reference and torch.matmul, eager, under torch.compile and
under CUDA-graph capture. Skipped without a CUDA GPU."""
import pytest
import torch

import cudal2

pytestmark = pytest.mark.gpu
F16 = torch.float16

# Tolerances of docs/verification.md: relative Frobenius error against the fp64 reference.
def tol(k, accum):
    return 6e-4 if accum == "f32" else 5e-4 * (1 + k**0.5 / 8)


def rel_err(c, a, b):
    ref = a.double() @ b.double()
    return ((c.double() - ref).norm() / ref.norm().clamp_min(1e-30)).item()


def operands(m, n, k, layout, seed=0):
    g = torch.Generator(device="cuda").manual_seed(seed)
    a = torch.randn(m, k, device="cuda", generator=g).to(F16)
    if layout == "tn":
        b = torch.randn(n, k, device="cuda", generator=g).to(F16).t()
    else:
        b = torch.randn(k, n, device="cuda", generator=g).to(F16)
    return a, b


# Table shapes of tables/seed.json (tiny kernels), neighbours of them, off-table and large ones.
SHAPES = [(64, 64, 64), (128, 128, 128), (256, 256, 256), (64, 512, 1024), (512, 512, 512), (63, 65, 64),
          (100, 130, 200), (1, 1, 1), (7, 4097, 1031), (33, 17, 9), (1024, 1024, 1024), (4096, 64, 4096),
          (2048, 2048, 2048), (16, 4096, 4096)]


@pytest.mark.parametrize("layout", ["nn", "tn"])
@pytest.mark.parametrize("m,n,k", SHAPES)
def test_eager_matches_reference(m, n, k, layout):
    a, b = operands(m, n, k, layout)
    assert cudal2.layout_of(b) == layout or min(n, k) == 1
    c = cudal2.mm(a, b)
    assert c.shape == (m, n) and c.dtype == F16 and c.is_contiguous()
    torch.cuda.synchronize()
    assert torch.isfinite(c).all()
    e = rel_err(c, a, b)
    assert e < tol(k, "f32"), f"{m}x{n}x{k} {layout}: rel err {e:.3g}"
    # and as close to the reference as torch.matmul is (both round once to fp16)
    assert e < 2 * rel_err(torch.matmul(a, b), a, b) + 2e-4


@pytest.mark.parametrize("m,n,k", [(64, 64, 64), (256, 256, 256), (512, 512, 2048)])
def test_f16_accumulation(m, n, k):
    a, b = operands(m, n, k, "nn", seed=1)
    e = rel_err(cudal2.mm(a, b, accum="f16"), a, b)
    assert e < tol(k, "f16")


def test_zero_one_exact():
    # the paper's check: {0,1} inputs, exact integer result
    g = torch.Generator(device="cuda").manual_seed(3)
    a = torch.randint(0, 2, (128, 256), device="cuda", generator=g).to(F16)
    b = torch.randint(0, 2, (256, 96), device="cuda", generator=g).to(F16)
    assert torch.equal(cudal2.mm(a, b), (a.float() @ b.float()).to(F16))


def test_strided_and_misaligned_inputs_are_copied():
    a0, b0 = operands(65, 48, 96, "nn", seed=2)
    cases = [
        (a0[1:], b0),  # base offset by one 96-half row (192 bytes: aligned), a plain view
        (a0[:, 1:95], b0[1:95]),  # non-contiguous rows, offset base
        (a0, b0[:, ::2]),  # strided columns
        (a0.t().contiguous().t(), b0),  # column-major a
        (torch.cat([a0.new_zeros(1), a0.flatten()])[1:].view(65, 96), b0),  # base 2 bytes past alignment
        (a0, torch.cat([b0.new_zeros(3), b0.t().flatten()])[3:].view(48, 96).t()),  # TN view, misaligned
    ]
    for a, b in cases:
        c = cudal2.mm(a, b)
        assert c.shape == (a.shape[0], b.shape[1])
        assert rel_err(c, a, b) < 6e-4


def test_zero_sizes():
    a, b = operands(4, 5, 6, "nn")
    assert cudal2.mm(a[:0], b).shape == (0, 5)
    assert cudal2.mm(a, b[:, :0]).shape == (4, 0)
    c = cudal2.mm(a[:, :0], b[:0])
    assert c.shape == (4, 5) and not c.any()


def test_errors_on_gpu():
    a, b = operands(8, 8, 8, "nn")
    with pytest.raises(TypeError):
        cudal2.mm(a.float(), b)
    with pytest.raises(RuntimeError, match="CUDA"):
        cudal2.mm(a.cpu(), b)
    with pytest.raises(ValueError):
        cudal2.mm(a, b[:4])


def test_query_reports_paths():
    q = cudal2.query(64, 64, 64, "nn")
    assert q["path"] in ("table-kernel", "neighbour-kernel", "bucket-kernel", "cublaslt")
    assert q["workspace_bytes"] >= 0


def test_current_stream_is_used():
    a, b = operands(512, 512, 512, "tn")
    s = torch.cuda.Stream()
    with torch.cuda.stream(s):
        c = cudal2.mm(a, b)
    s.synchronize()
    assert rel_err(c, a, b) < 6e-4


@pytest.mark.parametrize("layout", ["nn", "tn"])
def test_cuda_graph_capture(layout):
    cudal2.init()
    shapes = [(64, 64, 64), (100, 130, 200), (1024, 512, 256)]
    ops = [operands(m, n, k, layout, seed=i) for i, (m, n, k) in enumerate(shapes)]
    for a, b in ops:  # warm up (first call of an off-table shape prepares cuBLASLt outside capture)
        cudal2.mm(a, b)
    torch.cuda.synchronize()
    g = torch.cuda.CUDAGraph()
    with torch.cuda.graph(g):
        outs = [cudal2.mm(a, b) for a, b in ops]
    for trial in range(2):
        for a, b in ops:  # new values in the captured input buffers
            a.copy_(torch.randn_like(a, dtype=torch.float32).to(F16))
            b.copy_(torch.randn_like(b, dtype=torch.float32).to(F16))
        g.replay()
        torch.cuda.synchronize()
        for (a, b), c in zip(ops, outs):
            assert rel_err(c, a, b) < 6e-4


def test_torch_compile_fullgraph_inductor():
    def mlp(x, w1, w2):
        h = torch.relu(cudal2.mm(x, w1.t()))
        return cudal2.mm(h, w2.t()) + 1

    x = torch.randn(64, 256, device="cuda").to(F16)
    w1 = torch.randn(512, 256, device="cuda").to(F16) / 16
    w2 = torch.randn(128, 512, device="cuda").to(F16) / 16
    torch._dynamo.reset()
    expl = torch._dynamo.explain(mlp)(x, w1, w2)
    assert expl.graph_break_count == 0
    compiled = torch.compile(mlp, fullgraph=True)
    out = compiled(x, w1, w2)
    ref = mlp(x, w1, w2)
    torch.cuda.synchronize()
    assert ((out.float() - ref.float()).norm() / ref.float().norm()).item() < 2e-3


def test_torch_compile_reduce_overhead_cudagraphs():
    def f(x, w):
        return cudal2.mm(x, w.t()) * 2

    torch._dynamo.reset()
    compiled = torch.compile(f, fullgraph=True, mode="reduce-overhead")
    x = torch.randn(128, 256, device="cuda").to(F16)
    w = torch.randn(192, 256, device="cuda").to(F16)
    for _ in range(4):  # warm-up, record, replays
        out = compiled(x, w)
    torch.cuda.synchronize()
    assert rel_err(out / 2, x, w.t()) < 6e-4


@pytest.mark.parametrize("layout", ["nn", "tn"])
def test_autograd_matches_torch(layout):
    if cudal2.BACKEND != "c++":
        pytest.skip("the Python op has no autograd formula")
    a0, b0 = operands(96, 80, 112, layout, seed=3)
    a, b = a0.clone().requires_grad_(), (b0.t().clone().t() if layout == "tn" else b0.clone()).requires_grad_()
    ra, rb = a0.clone().requires_grad_(), b.detach().clone().requires_grad_()
    g = torch.randn(96, 80, device="cuda").to(F16)
    cudal2.mm(a, b).backward(g)
    (ra @ rb).backward(g)
    for ours, ref in ((a.grad, ra.grad), (b.grad, rb.grad)):
        err = ((ours.double() - ref.double()).norm() / ref.double().norm()).item()
        assert err < 2e-3, err


def test_linear_and_patch_match_nn_linear():
    torch.manual_seed(0)
    model = torch.nn.Sequential(torch.nn.Linear(256, 512), torch.nn.GELU(), torch.nn.Linear(512, 256)).cuda().half()
    x = torch.randn(2, 7, 256, device="cuda").to(F16)
    with torch.inference_mode():
        ref = model(x)
        cudal2.patch(model)
        assert all(type(m) is cudal2.Linear for m in (model[0], model[2]))
        out = model(x)
    torch.cuda.synchronize()
    assert out.shape == ref.shape
    assert ((out.float() - ref.float()).norm() / ref.float().norm()).item() < 2e-3


def test_linear_op_matches_functional_linear_with_gradients():
    if cudal2.BACKEND != "c++":
        pytest.skip("the op is registered by the C++ extension")
    torch.manual_seed(0)
    x = torch.randn(2, 7, 256, device="cuda").to(F16).requires_grad_()
    w = (torch.randn(384, 256, device="cuda") / 16).to(F16).requires_grad_()
    y = torch.ops.cudal2.linear(x, w)
    ref = torch.nn.functional.linear(x.detach().float(), w.detach().float())
    assert y.shape == (2, 7, 384) and y.dtype == F16
    assert ((y.float() - ref).norm() / ref.norm()).item() < 2e-3
    y.float().sum().backward()
    torch.cuda.synchronize()
    assert x.grad.shape == x.shape and w.grad.shape == w.shape
    gw = torch.ones(2 * 7, 384, device="cuda").t() @ x.detach().float().reshape(-1, 256)
    assert ((w.grad.float() - gw).norm() / gw.norm()).item() < 2e-3


def test_eager_host_time_not_above_torch_matmul():
    # The measurement is bench/product/torch_op_vs_matmul.py; this guards against a gross regression only.
    if cudal2.BACKEND != "c++":
        pytest.skip("the Python op costs more host time by design")
    import time

    a, b = operands(64, 64, 64, "tn")
    cudal2.mm(a, b), a @ b
    torch.cuda.synchronize()

    def host_us(fn, n=2000):
        t0 = time.perf_counter()
        for _ in range(n):
            fn(a, b)
        t = (time.perf_counter() - t0) / n * 1e6
        torch.cuda.synchronize()
        return t

    ours = min(host_us(cudal2.mm) for _ in range(3))
    theirs = min(host_us(torch.matmul) for _ in range(3))
    assert ours <= 1.25 * theirs, (ours, theirs)
