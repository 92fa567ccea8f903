import neostandard from 'neostandard'

export default [
  ...neostandard({ ts: true, ignores: ['dist/**', 'data/**', 'src/generated/**', 'node_modules/**', '.tap/**', 'bench/**'] })
]
