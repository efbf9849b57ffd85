"""The "Accuracy class" key of the interactive report's per-user wait chart shows
each class's colour (audit F1: BokehJS draws no legend swatch for a renderer
without data, so the key was a row of labels with nothing to decode the bars).

Checked twice: in the page's embedded Bokeh document (each legend item's renderer
has data to draw its swatch from) and as a person sees it, in headless Chromium
(each item's swatch canvas holds the class's colour, and the page logs nothing).
The browser helpers are those of ``test_report_browser``.
"""

from __future__ import annotations

import html
import json
import re
from pathlib import Path
from typing import Any

import pytest
import schedlab
from schedlab.report import CLASS_COLOURS, write_report
from schedlab.report_charts import embedded_objects
from test_report_browser import run_chromium

#: The accuracy classes' labels, in the order of :data:`CLASS_COLOURS`.
CLASSES = ("a1", "a2", "a3", "a4", "a5")


@pytest.fixture(scope="module")
def page(tmp_path_factory: pytest.TempPathFactory) -> Path:
    workload = schedlab.read("psp-fing:scenario=CFG,seed=2,jobs=300")
    result = schedlab.simulate(workload, policy="psp", backfill="easy", progress=False)
    return write_report(result, tmp_path_factory.mktemp("legend") / "report.html")


def document_models(page: Path) -> dict[str, dict[str, Any]]:
    """Every model of the page's embedded Bokeh document by id (its first, full
    serialisation: later mentions are references ``{"id": ...}``)."""
    (doc,) = re.findall(
        r'<script type="application/json" id="[^"]+">\s*(.*?)\s*</script>',
        page.read_text(encoding="utf-8").rpartition("<!-- end of Bokeh's resources -->")[2],
        re.S,
    )
    models: dict[str, dict[str, Any]] = {}

    def visit(node: Any) -> None:
        if isinstance(node, dict):
            if node.get("type") == "object" and "id" in node and "attributes" in node:
                models.setdefault(node["id"], node)
            for value in node.values():
                visit(value)
        elif isinstance(node, list):
            for value in node:
                visit(value)

    visit(json.loads(doc))
    return models


def column_length(source: dict[str, Any]) -> int:
    """Rows of a serialised ColumnDataSource (lists or ndarrays)."""
    lengths = []
    for _, value in source["attributes"]["data"]["entries"]:
        if isinstance(value, dict) and value.get("type") == "ndarray":
            lengths.append(int(value["shape"][0]))
        else:
            lengths.append(len(value))
    return max(lengths, default=0)


def class_legend(page: Path) -> dict[str, Any]:
    (legend,) = [
        attrs
        for attrs in embedded_objects(page.read_text(encoding="utf-8"), "Legend")
        if attrs.get("title") == "Accuracy class"
    ]
    return legend


def test_each_class_key_item_has_a_renderer_with_data(page: Path):
    legend = class_legend(page)
    models = document_models(page)
    labels = []
    for item in legend["items"]:
        item = models[item["id"]]["attributes"]
        labels.append(item["label"]["value"])
        assert item["renderers"], item
        for ref in item["renderers"]:
            renderer = models[ref["id"]]["attributes"]
            source = models[renderer["data_source"]["id"]]
            assert column_length(source) >= 1, (item["label"], source)
            glyph = models[renderer["glyph"]["id"]]["attributes"]
            colour = CLASS_COLOURS[CLASSES.index(item["label"]["value"])]
            assert glyph["fill_color"] == {"type": "value", "value": colour}, item["label"]
    # this generated schedule's 40 most active users span several classes
    assert len(labels) >= 3 and labels == sorted(labels) and set(labels) <= set(CLASSES)


#: Appended to a copy of the page: once Bokeh has drawn everything, the colours of
#: each legend item's swatch canvas, as JSON in ``<body data-legend>``.
SWATCH_PROBE = """<script>
(function () {
  "use strict";
  function idle() {
    if (!window.Bokeh || !Bokeh.documents.length || !Bokeh.documents[0].is_idle) return false;
    var roots = Array.from(Bokeh.index.roots);
    return roots.length > 0 && roots.every(function (v) { return v.has_finished(); });
  }
  function hex(v) { return ("0" + v.toString(16)).slice(-2); }
  function swatch(canvas) {
    var data = canvas.getContext("2d").getImageData(0, 0, canvas.width, canvas.height).data;
    var counts = {};
    for (var i = 0; i < data.length; i += 4) {
      if (data[i + 3] < 250) continue;
      var key = "#" + hex(data[i]) + hex(data[i + 1]) + hex(data[i + 2]);
      counts[key] = (counts[key] || 0) + 1;
    }
    return {pixels: canvas.width * canvas.height, colours: counts};
  }
  var timer = setInterval(function () {
    if (!idle()) return;
    clearInterval(timer);
    var legends = Array.from(Bokeh.index.all_views()).filter(function (v) {
      return v.model.type === "Legend";
    }).map(function (v) {
      return {chart: v.parent.model.name, title: v.model.title,
              items: v.entries.map(function (e) {
                return {label: e.label, swatch: swatch(e.glyph.canvas)};
              })};
    });
    document.body.setAttribute("data-legend", JSON.stringify(legends));
  }, 20);
})();
</script>"""


def test_each_class_key_item_shows_its_colour_in_a_browser(page: Path):
    text = page.read_text(encoding="utf-8")
    head, sep, tail = text.rpartition("</body>")
    probed = page.with_name("report-legend-probe.html")
    probed.write_text(head + SWATCH_PROBE + sep + tail, encoding="utf-8")
    done = run_chromium(probed, "--dump-dom", "--enable-logging=stderr", "--v=0")
    console = [line for line in done.stderr.splitlines() if ":CONSOLE" in line]
    assert not console, console  # no JavaScript error (nor any other message)
    found = re.search(r'<body[^>]*data-legend="([^"]*)"', done.stdout)
    assert found, "the probe did not finish: " + done.stderr[-2000:]
    (legend,) = [
        entry for entry in json.loads(html.unescape(found.group(1)))
        if entry["title"] == "Accuracy class"
    ]  # fmt: skip
    assert legend["chart"] == "mean-wait-per-user"
    models = document_models(page)
    labels = [
        models[ref["id"]]["attributes"]["label"]["value"] for ref in class_legend(page)["items"]
    ]
    assert [item["label"] for item in legend["items"]] == labels
    for item in legend["items"]:
        colour = CLASS_COLOURS[CLASSES.index(item["label"])]
        swatch = item["swatch"]
        # the class's colour fills a good part of the swatch (the square's inside)
        assert swatch["colours"].get(colour, 0) >= 0.1 * swatch["pixels"], (item, colour)
