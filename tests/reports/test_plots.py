"""harness.reports.plots: figures are quantised straight from the Agg canvas, the pixels savefig would have written,
and log axes carry their numbers as plain text (10⁻⁶), not as mathtext to parse."""
from __future__ import annotations

import base64
import io

import numpy as np
from PIL import Image

from harness.reports import plots


def _pixels(png: bytes) -> bytes:
    return Image.open(io.BytesIO(png)).convert("RGB").tobytes()


def _histogram():
    fig, ax = plots._figure(6.0, 2.6)
    values = np.random.default_rng(1).lognormal(-12, 1, 200)
    ax.hist(values, bins=np.logspace(np.log10(values.min()), np.log10(values.max()), 40), histtype="stepfilled",
            label="values")
    ax.set_xscale("log")
    ax.legend(fontsize=7)
    ax.set_title("a log-scale histogram", fontsize=10)
    return fig


def test_an_encoded_figure_has_the_pixels_savefig_writes():
    fig = _histogram()
    plots._plain_log_labels(fig)  # what _encode does to the figure before drawing it
    saved = io.BytesIO()
    fig.savefig(saved, format="png", dpi=plots._DPI)
    quantised = io.BytesIO()
    Image.open(saved).convert("RGB").quantize(colors=plots.PALETTE_COLOURS).save(quantised, format="PNG")
    encoded = plots._encode(fig, "t")["uri"].split(",", 1)[1]
    assert _pixels(base64.b64decode(encoded)) == _pixels(quantised.getvalue())


def test_a_different_figure_has_different_pixels():
    """Negative control: the comparison above tells two figures apart (one more line drawn)."""
    fig = _histogram()
    plain = plots._encode(fig, "t")["uri"]
    fig.axes[0].axvline(1e-5, color="k")
    assert _pixels(base64.b64decode(plots._encode(fig, "t")["uri"].split(",", 1)[1])) != \
        _pixels(base64.b64decode(plain.split(",", 1)[1]))


def _tick_labels(fig) -> list[str]:
    fig.canvas.draw()
    return [t.get_text() for t in fig.axes[0].xaxis.get_ticklabels(which="both") if t.get_text()]


def test_log_axes_are_labelled_in_plain_text_with_the_same_numbers():
    mathtext = _tick_labels(_histogram())
    fig = _histogram()
    plots._plain_log_labels(fig)
    plain = _tick_labels(fig)
    assert mathtext and all(t.startswith("$") for t in mathtext)  # negative control: matplotlib's own labels
    assert plain == [plots.plain_label(t) for t in mathtext] and not any("$" in t for t in plain)


def test_a_mathtext_label_becomes_the_same_number():
    assert [plots.plain_label(t) for t in (r"$\mathdefault{10^{-6}}$", r"$\mathdefault{2\times10^{-6}}$",
                                           r"$\mathdefault{-10^{3}}$", r"$\mathdefault{10^{0}}$", "12 us")] == \
        ["10⁻⁶", "2×10⁻⁶", "−10³", "10⁰", "12 us"]
