import { useEffect, useRef } from "preact/hooks";
import type { ChartOption } from "../charts/options.js";

/**
 * An Apache ECharts chart, loaded with the first chart shown. It is an image to assistive
 * technology, labelled with what it shows; the same numbers are in the table beside it.
 */
export function Chart({
  option,
  label,
  height = 260,
}: {
  option: ChartOption;
  label: string;
  height?: number;
}) {
  const container = useRef<HTMLDivElement>(null);
  useEffect(() => {
    let live = true;
    let dispose = () => {};
    import("../charts/echarts.js").then(({ echarts }) => {
      const element = container.current;
      if (!live || !element) return;
      const chart = echarts.init(element, null, { renderer: "svg" });
      chart.setOption(option as never);
      const observer = new ResizeObserver(() => chart.resize());
      observer.observe(element);
      dispose = () => {
        observer.disconnect();
        chart.dispose();
      };
    });
    return () => {
      live = false;
      dispose();
    };
  }, [option]);
  return (
    <div class="chart" ref={container} role="img" aria-label={label} style={{ height: `${height}px` }} />
  );
}
