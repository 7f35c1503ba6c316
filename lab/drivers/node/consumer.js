// A KafkaJS consumer that journals every record it processes (journal/processed-<member>.jsonl).
// Logs with KafkaJS's default log creator (one JSON object a line on the console) at the level
// asked; KafkaJS tells no generation to the application, so the journal's generation is null.
'use strict'
const fs = require('fs')
const path = require('path')
const { Kafka, logLevel } = require('kafkajs')

function options(argv) {
  const found = { topic: [] }
  for (let i = 2; i < argv.length; i += 2) {
    const key = argv[i].replace(/^--/, '')
    if (key === 'topic') found.topic.push(argv[i + 1])
    else found[key] = argv[i + 1]
  }
  for (const required of ['bootstrap', 'group', 'member', 'journal']) {
    if (!found[required]) throw new Error(`--${required} is required`)
  }
  return found
}

async function main() {
  const args = options(process.argv)
  const kafka = new Kafka({
    clientId: args['client-id'] || 'kafkajs',
    brokers: [args.bootstrap],
    logLevel: args['log-level'] === 'DEBUG' ? logLevel.DEBUG : logLevel.INFO,
  })
  const consumer = kafka.consumer({
    groupId: args.group,
    sessionTimeout: Number(args['session-timeout-ms'] || 10000),
    heartbeatInterval: Number(args['heartbeat-interval-ms'] || 3000),
    metadataMaxAge: Number(args['metadata-max-age-ms'] || 300000),
    allowAutoTopicCreation: false,
  })
  fs.mkdirSync(args.journal, { recursive: true })
  const journal = fs.openSync(path.join(args.journal, `processed-${args.member}.jsonl`), 'a')
  const slowAfter = Number(args['slow-after'] || 0)
  const slowMs = Number(args['slow-ms'] || 0)
  let count = 0
  let stalled = false
  let stopping = false
  const stop = async () => {
    if (stopping) return
    stopping = true
    await consumer.disconnect()
    fs.closeSync(journal)
    process.exit(0)
  }
  process.on('SIGTERM', stop)
  process.on('SIGINT', stop)
  await consumer.connect()
  await consumer.subscribe({ topics: args.topic, fromBeginning: (args['offset-reset'] || 'earliest') === 'earliest' })
  await consumer.run({
    eachMessage: async ({ topic, partition, message }) => {
      const record = { member: args.member, generation: null, topic, partition, offset: Number(message.offset) }
      fs.writeSync(journal, JSON.stringify(record) + '\n')
      count += 1
      if (slowMs && !stalled && count >= slowAfter) {
        stalled = true
        await new Promise(resolve => setTimeout(resolve, slowMs))
      }
    },
  })
}

main().catch(error => {
  console.error(error)
  process.exit(1)
})
