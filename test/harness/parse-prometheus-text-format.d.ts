/** Types of parse-prometheus-text-format (the package ships none). */
declare module 'parse-prometheus-text-format' {
  /** Parses the Prometheus text format into metric families. */
  export default function parsePrometheusTextFormat(text: string): unknown[];
}
