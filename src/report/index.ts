/**
 * The report library: `standoff report build` (`buildReport`) and `standoff report notebook`
 * (`runNotebook`), plus the figure renderer they share.
 */
export {
  buildReport,
  buildAnyReport,
  renderReport,
  renderGenericReport,
  DEFAULT_REPORT_SEED,
  DEFAULT_RESAMPLES,
  DEFAULT_LEVEL,
  DEFAULT_OUT,
  RESULTS_SCHEMA,
  type BuildReportOptions,
  type BuildReportResult,
  type ReportResults,
  type GenericReportResults,
} from './build-report.ts';
export { runNotebook, parseNotebook, MAX_ROWS, NOTEBOOK_BLOCKS, type NotebookOptions, type NotebookResult } from '../notebook/notebook.ts';
export { renderFigure, renderFigures, normalizeIds, fontFiles, FONT_FAMILY, type RenderedFigure, type RenderOptions } from './render-figure.ts';
