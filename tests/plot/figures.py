"""What the figure tests look for in a drawn figure: legends, text that leaves the figure."""

from __future__ import annotations

from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure
from matplotlib.legend import Legend
from matplotlib.text import Text


def legends(fig: Figure) -> list[Legend]:
    """The legends naming a swept parameter's values (they have a title), figure's or axes'."""
    found = dict.fromkeys([*fig.legends, *fig.findobj(Legend)])
    return [lg for lg in found if lg.get_title().get_text()]


def texts_outside(fig: Figure) -> list[str]:
    """Each drawn text whose extent leaves the figure: ``"<text>: <extent>"``.

    Tick labels are judged through their axis's extent, since an axis keeps labels
    for ticks outside its view that are never drawn.
    """
    canvas = FigureCanvasAgg(fig)
    canvas.draw()
    renderer = canvas.get_renderer()
    box = fig.bbox
    ticks, boxes = set(), []
    # every axes, secondary ones too (fig.axes leaves them out)
    for ax in fig.findobj(lambda a: hasattr(a, "xaxis") and hasattr(a, "yaxis")):
        for axis in (ax.xaxis, ax.yaxis):
            for tick in [*axis.get_major_ticks(), *axis.get_minor_ticks()]:
                ticks.update((tick.label1, tick.label2))
            boxes.append((f"{axis.__name__} tick labels of {ax!r}", axis.get_tightbbox(renderer)))
    for text in fig.findobj(Text):
        if text in ticks or not text.get_visible() or not text.get_text().strip():
            continue
        boxes.append((repr(text.get_text()), text.get_window_extent(renderer)))
    outside = []
    for what, extent in boxes:
        if extent is None:
            continue
        # a pixel of slack: extents are rounded outwards, the figure's are not
        inside = box.x0 - 1 <= extent.x0 and extent.x1 <= box.x1 + 1
        inside &= box.y0 - 1 <= extent.y0 and extent.y1 <= box.y1 + 1
        if not inside:
            outside.append(f"{what}: {extent.bounds}")
    return outside
