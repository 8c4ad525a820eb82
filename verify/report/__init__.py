"""The report: the default sweep of every claim rendered as Markdown, HTML, CSV/JSON, LaTeX tables and
plots. :mod:`.build` runs the sweep and assembles the pages; :mod:`.sections` holds the per-topic
material (tables and plots beyond the per-claim records) in the order set there.
"""

from attnsim.verify.report.build import write_report

__all__ = ["write_report"]
