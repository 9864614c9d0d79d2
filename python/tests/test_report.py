"""`cudal2 report`: the generator over real, empty, partial and odd inputs, and the page as a person
sees it (headless Chromium: every figure loaded and non-blank). CPU only; needs matplotlib, and
Chromium for the browser test (skipped without it unless $CI or $CUDAL2_REQUIRE_CHROMIUM is set)."""
import json
import os
import re
import shutil
import sqlite3
import subprocess
import sys

import pytest

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
SCRIPT = os.path.join(REPO, "python", "cudal2", "report.py")
H100 = os.path.join(REPO, "bench", "results", "h100")

pytest.importorskip("matplotlib")


def report(*args):
    p = subprocess.run([sys.executable, SCRIPT, *args], capture_output=True, text=True, timeout=300)
    return p.returncode, p.stdout, p.stderr


def pngs(d):
    return sorted(f for f in os.listdir(d) if f.endswith(".png"))


def nonblank(path):
    """A PNG that is not one flat colour: pixel standard deviation and share of non-background pixels."""
    import matplotlib.image as mpimg
    import numpy as np

    img = mpimg.imread(path)[..., :3]
    bg = np.median(img.reshape(-1, 3), axis=0)
    differs = (np.abs(img - bg).sum(axis=2) > 0.1).mean()
    return float(img.std()) > 0.02 and differs > 0.01


HEADER = ("m,n,k,class,accum,method,layout,mode,timer,median_us,p10_us,p90_us,min_us,n_samples,inner,tflops,"
          "roofline_pct,ratio_to_best_baseline,paired_ratio,status,failure,reason,rel_err,tol,exact_checked,exact_mismatches,"
          "sampled,sm_mhz_min,sm_mhz_max,seed,details")


def sample_lines():
    with open(os.path.join(H100, "sample.csv")) as f:
        return f.read().splitlines()


def test_committed_results(tmp_path):
    rc, out, err = report("--csv", os.path.join(H100, "grid0.csv.xz"), "--csv", os.path.join(H100, "sample.csv"),
                          "--out", str(tmp_path))
    assert rc == 0, err
    page = (tmp_path / "index.html").read_text()
    names = pngs(tmp_path)
    # sorted curves, by class, roofline for both sets; offline vs server and heatmaps where the data allows
    for want in ["s1_speedup_sorted.png", "s1_by_class.png", "s1_heatmaps.png", "s1_roofline.png",
                 "s2_speedup_sorted.png", "s2_by_class.png", "s2_offline_vs_server.png", "s2_roofline.png"]:
        assert want in names and f'src="{want}"' in page
    for n in names:
        assert nonblank(tmp_path / n), n
    assert "torch-matmul" in page and "cublaslt-heuristic" in page


@pytest.mark.parametrize("ext", [".gz", ".xz"])
def test_compressed_csv_and_a_subject_per_section(tmp_path, ext):
    # The runtime's committed runs are .csv.gz, the whole-grid ones .csv.xz; each section may have
    # its own subject (the runtime in one, auto-tuning among the baselines in the next).
    import gzip
    import lzma

    lines = sample_lines()
    rows = [l.replace(",cublas-nn,", ",runtime-nn,").replace(",cublas-tn,", ",runtime-tn,")
            for l in lines if ",cublas-nn," in l or ",cublas-tn," in l]
    packed = tmp_path / ("rt.csv" + ext)
    with (gzip.open if ext == ".gz" else lzma.open)(packed, "wt") as f:
        f.write("\n".join(lines + rows) + "\n")
    rc, out, err = report("--csv", str(packed), "--section-subject", "runtime", "--csv", os.path.join(H100, "sample.csv"),
                          "--section-subject", "cublaslt-autotune", "--out", str(tmp_path / "out"))
    assert rc == 0, err
    page = (tmp_path / "out" / "index.html").read_text()
    first, second = page.split("<section>")[1:3]
    assert "Subject: <b>runtime</b>" in first
    assert "torch-matmul" in first.split("Subject")[1]  # every baseline of the run is the runtime's
    assert "Subject: <b>cublaslt-autotune</b>" in second


def test_a_corrupt_xz_is_one_error_line(tmp_path):
    bad = tmp_path / "bad.csv.xz"
    bad.write_bytes(b"not xz at all")
    rc, out, err = report("--csv", str(bad), "--out", str(tmp_path / "out"))
    assert rc == 2 and "cannot read" in err and "Traceback" not in err


@pytest.mark.parametrize("content", ["", "# only comments\n", "# cudal2 bench\n" + HEADER + "\n"])
def test_empty_csv(tmp_path, content):
    f = tmp_path / "empty.csv"
    f.write_text(content)
    rc, out, err = report("--csv", str(f), "--out", str(tmp_path / "out"))
    assert rc == 2
    assert "cudal2 report: error: no ok measurements" in err
    assert "Traceback" not in err
    assert not (tmp_path / "out" / "index.html").exists()


def test_only_failed_rows(tmp_path):
    f = tmp_path / "failed.csv"
    f.write_text(HEADER + "\n64,64,64,small,f32,cublas-nn,nn,offline,graph,,,,,0,0,,,,,mismatch,exact,bad,,,,,,,,1,{}\n")
    rc, out, err = report("--csv", str(f), "--out", str(tmp_path / "out"))
    assert rc == 2 and "no ok measurements" in err


def test_missing_and_foreign_files(tmp_path):
    rc, _, err = report("--csv", str(tmp_path / "nope.csv"), "--out", str(tmp_path / "o"))
    assert rc == 2 and "cannot read" in err and "Traceback" not in err
    rc, _, err = report("--csv", str(tmp_path / "nope*.csv"), "--out", str(tmp_path / "o"))
    assert rc == 2 and "no file matches" in err
    (tmp_path / "x.csv").write_text("a,b\n1,2\n")
    rc, _, err = report("--csv", str(tmp_path / "x.csv"), "--out", str(tmp_path / "o"))
    assert rc == 2 and "not a cudal2 bench/eval CSV" in err
    rc, _, err = report("--out", str(tmp_path / "o"))
    assert rc == 2 and "nothing to report" in err
    rc, _, err = report("--db", str(tmp_path / "none.db"), "--out", str(tmp_path / "o"))
    assert rc == 2 and "no such store" in err


def test_partial_csv_truncated(tmp_path):
    lines = sample_lines()
    cut = lines[:120] + [lines[120][: len(lines[120]) // 2]]  # a run killed mid-write
    f = tmp_path / "partial.csv"
    f.write_text("\n".join(cut))
    rc, out, err = report("--csv", str(f), "--out", str(tmp_path / "out"))
    assert rc == 0, err
    assert "incomplete" in err
    page = (tmp_path / "out" / "index.html").read_text()
    assert "incomplete" in page
    assert pngs(tmp_path / "out")
    # a row with fields missing (cut before the quoted details column) is skipped too
    f.write_text("\n".join(lines[:120] + [lines[120][:40], lines[121]]) + "\n")
    rc, out, err = report("--csv", str(f), "--out", str(tmp_path / "out2"))
    assert rc == 0 and "1 row(s) could not be parsed" in err


def test_single_method_has_no_baseline(tmp_path):
    lines = [l for l in sample_lines() if l.startswith("#") or l.startswith("m,") or ",torch-matmul," in l]
    f = tmp_path / "one.csv"
    f.write_text("\n".join(lines) + "\n")
    rc, out, err = report("--csv", str(f), "--out", str(tmp_path / "out"))
    assert rc == 0, err
    page = (tmp_path / "out" / "index.html").read_text()
    assert "No baseline to compare" in page
    assert pngs(tmp_path / "out") == ["s1_roofline.png"]


def test_store(tmp_path):
    db = tmp_path / "t.db"
    con = sqlite3.connect(db)
    con.execute("PRAGMA application_id = 1668637746")  # cudal2's (src/store/schema.hpp), schema 4
    con.execute("PRAGMA user_version = 4")
    con.execute("CREATE TABLE measurements (gpu TEXT, dtype TEXT, layout TEXT, m INT, n INT, k INT, mode TEXT, "
                "timer TEXT, status TEXT, median_us REAL, baseline_json TEXT)")
    for i, (m, n, k) in enumerate([(64, 64, 64), (128, 128, 128), (256, 256, 256), (4096, 64, 4096)]):
        for layout in ("nn", "tn"):
            bj = {f"cublas-{layout}": {"offline": {"graph": {"median": 2.0 + i}}}}
            for us in (1.9 + i, 2.5 + i):  # two specs: the faster one counts
                con.execute("INSERT INTO measurements VALUES ('GPU', 'f32', ?, ?, ?, ?, 'offline', 'graph', 'ok', ?, ?)",
                            (layout, m, n, k, us, json.dumps(bj)))
    con.execute("INSERT INTO measurements VALUES ('GPU','f32','nn',8,8,8,'offline','graph','compile-error',NULL,'{}')")
    con.commit()
    con.close()
    rc, out, err = report("--db", str(db), "--out", str(tmp_path / "out"))
    assert rc == 0, err
    page = (tmp_path / "out" / "index.html").read_text()
    assert "Subject: <b>cudal2</b>" in page
    assert re.search(r"<td>cublas</td><td>4</td>", page)


def test_cli_hook(tmp_path):
    cli = os.environ.get("CUDAL2_CLI")  # ctest sets it to the build's cudal2
    if not cli or not os.path.exists(cli):
        pytest.skip("CUDAL2_CLI (the built cudal2 executable) not given")
    env = dict(os.environ, CUDAL2_PYTHON=sys.executable)
    p = subprocess.run([cli, "report", "--csv", os.path.join(H100, "sample.csv"), "--out", str(tmp_path / "r")],
                       capture_output=True, text=True, env=env, timeout=300)
    assert p.returncode == 0, p.stderr
    assert (tmp_path / "r" / "index.html").exists()
    p = subprocess.run([cli, "report", "--out", str(tmp_path / "r2")], capture_output=True, text=True, env=env)
    assert p.returncode == 2 and "nothing to report" in p.stderr


def chromium():
    for name in ("chromium", "chromium-browser", "google-chrome"):
        path = shutil.which(name)
        if path:
            return path
    if os.environ.get("CI") or os.environ.get("CUDAL2_REQUIRE_CHROMIUM"):
        pytest.fail("Chromium is required here (bash scripts/bootstrap.sh installs the Debian package)")
    pytest.skip("Chromium not installed (Debian package chromium)")


CHECK_JS = """<script>window.addEventListener('load', function () {
  var r = [];
  for (const i of document.images) r.push([i.getAttribute('src'), i.complete, i.naturalWidth, i.naturalHeight]);
  document.body.setAttribute('data-imgcheck', JSON.stringify(r));
});</script>"""


def test_page_in_headless_chromium(tmp_path):
    browser = chromium()
    out = tmp_path / "report"
    rc, _, err = report("--csv", os.path.join(H100, "grid*.csv.xz"), "--csv", os.path.join(H100, "sample.csv"),
                        "--out", str(out))
    assert rc == 0, err
    flags = [browser, "--headless", "--no-sandbox", "--disable-gpu", "--hide-scrollbars",
             "--allow-file-access-from-files", f"--user-data-dir={tmp_path / 'profile'}"]
    # 1. every <img> loaded: a copy of the page that records each image's state once loaded
    page = (out / "index.html").read_text()
    (out / "check.html").write_text(page.replace("</body>", CHECK_JS + "</body>"))
    p = subprocess.run(flags + ["--virtual-time-budget=10000", "--dump-dom", (out / "check.html").as_uri()],
                       capture_output=True, text=True, timeout=120)
    m = re.search(r'data-imgcheck="([^"]*)"', p.stdout)
    assert m, "Chromium did not report the images: " + p.stderr[-2000:]
    imgs = json.loads(m.group(1).replace("&quot;", '"'))
    assert len(imgs) == len(pngs(out)) >= 8
    for src, complete, w, h in imgs:
        assert complete and w > 0 and h > 0, f"{src} did not load"
        assert nonblank(out / src), f"{src} is blank"
    # 2. a screenshot of the page as a person would see it: not blank either
    shot = tmp_path / "page.png"
    p = subprocess.run(flags + ["--window-size=1300,2400", f"--screenshot={shot}", (out / "index.html").as_uri()],
                       capture_output=True, text=True, timeout=120)
    assert shot.exists(), p.stderr[-2000:]
    assert nonblank(shot)
    keep = os.environ.get("CUDAL2_REPORT_SCREENSHOT")
    if keep:
        shutil.copyfile(shot, keep)
