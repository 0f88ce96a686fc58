"""harness.reports.plots: figures are quantised straight from the Agg canvas, the pixels savefig would have written."""
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
