/**
 * Small rolling time-series plots (uPlot) for the demo: one plot per metric,
 * one series per path (or per named series), the last {@link WINDOW_S} seconds.
 */
import uPlot from 'uplot';
import 'uplot/dist/uPlot.min.css';

/** Seconds of history each plot keeps. */
export const WINDOW_S = 60;

/** Colour of path i (also used by the toggles and tables). */
export const PATH_COLOURS = ['#1f77b4', '#ff7f0e', '#2ca02c', '#d62728', '#9467bd', '#8c564b', '#e377c2', '#7f7f7f'];

export interface RollingPlot {
  /** Append one sample: `values[i]` for series i (null = no value). */
  push(tS: number, values: Array<number | null>): void;
}

/**
 * A plot of `series` (names) under `title`, in `parent`.
 * @param colours per series; default {@link PATH_COLOURS}.
 */
export function rollingPlot(parent: HTMLElement, title: string, series: string[], opts: { width?: number; height?: number; colours?: string[] } = {}): RollingPlot {
  const colours = opts.colours ?? PATH_COLOURS;
  const data: Array<Array<number | null>> = [[], ...series.map(() => [])];
  const plot = new uPlot(
    {
      title,
      width: opts.width ?? 280,
      height: opts.height ?? 130,
      legend: { show: true, live: false },
      cursor: { show: false },
      scales: { x: { time: false } },
      axes: [{ size: 24, values: (_u, ticks) => ticks.map((t) => `${Math.round(t)}s`) }, { size: 40 }],
      series: [{}, ...series.map((label, i) => ({ label, stroke: colours[i % colours.length], width: 1.5, spanGaps: false }))],
    },
    data as uPlot.AlignedData,
    parent,
  );
  return {
    push(tS, values) {
      data[0].push(tS);
      for (let i = 0; i < series.length; i++) data[i + 1].push(values[i] ?? null);
      while ((data[0][0] as number) < tS - WINDOW_S) for (const d of data) d.shift();
      plot.setData(data as uPlot.AlignedData);
    },
  };
}
