// pdf.js's worker, bundled by build.py as its own entry (assets/pdf_worker-HASH.js, named in the boot JSON
// as pdfWorker) so the PDF reader (pdf.js) can start it from this site: nothing is fetched elsewhere.
import "pdfjs-dist/build/pdf.worker.min.mjs";
