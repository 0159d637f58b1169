"""A plot overwrites only a plot dphybrid wrote (its mark in the image metadata), never a user's image."""

from __future__ import annotations

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import pytest  # noqa: E402

from hybrid.cli import main  # noqa: E402
from hybrid.suites.plots import bounds_plot, plot_path  # noqa: E402
from samplers.errors import DPHybridError  # noqa: E402


def users_picture(path):
    fig, ax = plt.subplots()
    ax.plot([0, 1], [1, 0])
    fig.savefig(path)
    plt.close(fig)
    return path.read_bytes()


@pytest.mark.parametrize("suffix", [".png", ".pdf", ".svg"])
def test_a_users_image_is_refused_and_left_alone(tmp_path, suffix):
    photo = tmp_path / f"photo{suffix}"
    before = users_picture(photo)
    with pytest.raises(DPHybridError, match="refusing to overwrite"):
        plot_path(str(photo))
    assert photo.read_bytes() == before


@pytest.mark.parametrize("suffix", [".png", ".pdf", ".svg"])
def test_a_plot_we_wrote_may_be_written_again(tmp_path, suffix):
    target = tmp_path / f"bounds{suffix}"
    bounds_plot(["a", "b"], [0.1, 0.2], [None, 0.3], {}, target, "t")
    assert target.exists()
    assert plot_path(str(target)) == target


def test_the_cli_refuses_a_users_png_with_exit_2(tmp_path, capsys):
    photo = tmp_path / "photo.png"
    before = users_picture(photo)
    assert main(["search", "trunc_geom", "--samples", "20000", "--plot", str(photo)]) == 2
    assert "refusing to overwrite" in capsys.readouterr().err
    assert photo.read_bytes() == before


def test_an_existing_path_without_an_extension_is_refused(tmp_path):
    existing = tmp_path / "notes"
    existing.write_text("mine")
    with pytest.raises(DPHybridError, match="names no image format"):
        plot_path(str(existing))
    assert not (tmp_path / "notes.png").exists() and existing.read_text() == "mine"
