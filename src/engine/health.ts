/** Whether the engine can serve, for `/readyz`. */
export interface EngineHealth {
  /** The cluster's status (`green`, `yellow`); throws ServiceUnavailableError when it cannot serve. */
  check(): Promise<string>;
}
