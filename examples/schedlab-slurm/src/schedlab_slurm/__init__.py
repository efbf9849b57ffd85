"""schedlab-slurm: read and write Slurm accounting (``sacct --parsable2``) with schedlab.

Installing this distribution is all it takes: its entry point (group ``schedlab``,
name ``slurm``) registers a reader and a writer called ``slurm`` (alias ``sacct``),
so ``schedlab convert dump.log out.swf`` recognises sacct output by its content and
``schedlab convert trace.swf out.sacct`` writes it. It uses only schedlab's public
API (``schedlab.hookimpl``, ``schedlab.ReaderSpec`` ...), like any third-party plugin.
"""

__version__ = "0.1.0"
