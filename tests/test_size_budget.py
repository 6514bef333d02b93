"""What keeps a re-measured run under the repository's size budget (docs/developing.md, "Large files"): runs are
committed xz-compressed (results.json.xz), which every reader takes, and plots are palette PNGs."""

import lzma

from gpumemlab.bench.records import Record, RunResults


def _times(t: float) -> dict:
    return dict(median=t, min=t, max=t, p10=t, p90=t, samples=[t] * 20)


def _run() -> RunResults:
    recs = [Record("offset_copy", f"offset_{k}", dict(offset=k), 4096, None,
                   _times(1e-6 * (1 + k)), 50.0 / (1 + k), None, None,
                   "copy_gbps", True) for k in range(4)]
    return RunResults(meta=dict(command="gpumemlab run offset_copy", date="d"), device=dict(name="GPU A"),
                      ceilings=dict(copy_gbps=dict(value=100.0, unit="GB/s")), results=recs,
                      experiments=dict(offset_copy=dict(title="offset copy")))


def test_xz_round_trips_the_same_document_and_is_smaller(tmp_path):
    run = _run()
    run.save(tmp_path / "results.json")
    run.save(tmp_path / "results.json.xz")
    plain, packed = (tmp_path / "results.json").read_bytes(), (tmp_path / "results.json.xz").read_bytes()
    assert lzma.decompress(packed) == plain and len(packed) < len(plain)
    assert RunResults.load(tmp_path / "results.json.xz").to_dict() == RunResults.load(tmp_path / "results.json").to_dict()


def test_report_and_compare_read_a_compressed_run(tmp_path, run_cli):
    run = _run()
    run.save(tmp_path / "a" / "results.json")
    run.save(tmp_path / "b" / "results.json.xz")
    code, out, err = run_cli("compare", str(tmp_path / "a" / "results.json"), str(tmp_path / "b" / "results.json.xz"))
    assert code == 0 and err == "" and "offset_3" in out
    code, _, err = run_cli("report", str(tmp_path / "b" / "results.json.xz"), "--format", "csv")
    assert code == 0 and err.strip() == f"wrote {tmp_path / 'b' / 'report.csv'}"
    assert (tmp_path / "b" / "report.csv").read_text().count("offset_copy") == 4


def test_broken_xz_data_is_one_line_and_exit_2(tmp_path, run_cli):
    _run().save(tmp_path / "results.json.xz")
    bad = tmp_path / "results.json.xz"
    bad.write_bytes(bad.read_bytes()[:40])  # the header, then nothing
    code, _, err = run_cli("report", str(bad))
    assert code == 2 and len(err.splitlines()) == 1
    assert f"{bad}: not a gpumemlab results.json (broken xz data: " in err


def test_plots_are_palette_pngs(tmp_path):
    from PIL import Image

    from gpumemlab.report import plots

    written = plots.write_plots(_run(), tmp_path)
    assert written == {"offset_copy": "offset_copy.png"}
    with Image.open(tmp_path / "offset_copy.png") as im:
        assert im.format == "PNG" and im.mode == "P" and len(im.getcolors()) <= 256
