/**
 * The canonical order of records another stage wrote. Resumable stages (annotation, evaluation runs)
 * append each record as it finishes, so their files hold them in completion order, which depends on
 * concurrency and on where a run was interrupted. Training on them (step-DPO, SFT, TRL data) or
 * summing floats over them is order-sensitive, so every reader that feeds a result takes them in
 * dataset order, then by id (code units, not the locale's collation) for any the dataset does not list.
 */
export function inDatasetOrder<T extends { id: string }>(records: readonly T[], dataset: readonly { id: string }[] = []): T[] {
  const rank = new Map(dataset.map((q, i) => [q.id, i]));
  return [...records].sort((a, b) => (rank.get(a.id) ?? Infinity) - (rank.get(b.id) ?? Infinity) || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
}
